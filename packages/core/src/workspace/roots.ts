/**
 * Where a root's node is. A root of at most INLINE_NODE_MAX bytes that an
 * apply publishes is held in the journal event that names it (`root_node`),
 * as a small directory is held in its parent's entry, and every later event
 * naming the same root holds it too: a step that publishes a small root then
 * writes no object row and no key-index entry for it (a fork's first event
 * holds its root the same way). A larger root — and a root also stored for
 * another reason: the empty root of a new run, a pinned root — is a row of
 * `workspace_object`.
 *
 * So a root is read from its event when the event is at hand (the newest
 * one, for the current root), else as an object, else from the newest event
 * holding it. Only a root is ever held there: a node below a root is a row.
 * (A new tree that has a former root below its top built that node again —
 * every edit rewrites its path from the top down — so it stores its row.)
 */
import type { Executor } from "../port/driver.js";
import { EMPTY_ROOT_ID_BYTES } from "./node.js";
import { readNodeBytes, type StoredNode } from "./node-bytes.js";
import type { RootBase } from "./publish.js";

/** The newest event: its sequence and root (the current root), its root's node when held, its digest. */
const HEAD =
  "SELECT sequence, root_id, root_node, digest FROM journal ORDER BY sequence DESC LIMIT 1";

/**
 * The node of a root, from the newest event that holds it. No index serves
 * this (a step would pay a page a commit for one): the scan runs from the
 * newest event back, and only when a named root is not an object.
 */
const HELD = `SELECT root_node FROM journal
WHERE root_id = ? AND root_node IS NOT NULL ORDER BY sequence DESC LIMIT 1`;

/** A root's id and, when its event holds it, its node's bytes. */
export interface RootRef {
  readonly id: Uint8Array;
  readonly node?: Uint8Array | undefined;
}

/**
 * The newest event — its sequence (0 before the first) and root, the current
 * one, with the root's node when the event holds it, and the event's
 * digest. Under the write lock this is exact.
 */
export async function readHead(executor: Executor): Promise<RootBase> {
  const row = (await executor.execute(HEAD)).rows[0];
  if (row === undefined) return { sequence: 0, root: EMPTY_ROOT_ID_BYTES };
  const node = row.root_node;
  const head = {
    sequence: Number(row.sequence),
    root: row.root_id as Uint8Array,
    digest: row.digest as Uint8Array,
  };
  return node instanceof Uint8Array ? { ...head, rootNode: node } : head;
}

/** The node the journal holds for root `id`, if an event holds it. */
export async function heldRoot(
  executor: Executor,
  id: Uint8Array,
): Promise<Uint8Array | undefined> {
  const node = (await executor.execute(HELD, [id])).rows[0]?.root_node;
  return node instanceof Uint8Array ? node : undefined;
}

/** The root an event records, with its node when the event holds it. */
const EVENT_ROOT = "SELECT root_id, root_node FROM journal WHERE sequence = ?";

/** The root event `sequence` records, or undefined when the journal has no such event (never written, or pruned). */
export async function eventRoot(
  executor: Executor,
  sequence: number,
): Promise<RootRef | undefined> {
  const row = (await executor.execute(EVENT_ROOT, [sequence])).rows[0];
  if (row === undefined) return undefined;
  const node = row.root_node;
  return { id: row.root_id as Uint8Array, node: node instanceof Uint8Array ? node : undefined };
}

/**
 * A root's bytes: as a stored node, else as the newest journal event holding
 * it (roots.ts). Only a root may be found there; any other node is a row.
 */
export async function readRootBytes(executor: Executor, id: Uint8Array): Promise<StoredNode> {
  const stored = await readNodeBytes(executor, id);
  if (!stored.missing) return stored;
  const held = await heldRoot(executor, id);
  return held === undefined ? stored : { bytes: held };
}
