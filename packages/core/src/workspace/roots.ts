/**
 * Where a root's node is. A root of at most INLINE_NODE_MAX bytes that an
 * apply publishes is held in the journal event that names it (the journal
 * keeps its bytes in the event's row), as a small directory is held in its
 * parent's entry, and every later event naming the same root holds it too:
 * a step that publishes a small root then writes no object row and no
 * key-index entry for it (a fork's first event holds its root the same
 * way). A larger root — and a root also stored for another reason: the
 * empty root of a new run, a pinned root — is a row of `workspace_object`.
 *
 * So a root is read from its event when the event is at hand (the newest
 * one, for the current root), else as an object, else from the newest event
 * holding it (JournalRoots.heldBytes). Only a root is ever held there: a
 * node below a root is a row. (A new tree that has a former root below its
 * top built that node again — every edit rewrites its path from the top
 * down — so it stores its row.)
 */
import type { Executor } from "../port/driver.js";
import { type NodeBytes, readNodeBytes } from "./node-bytes.js";
import type { JournalRoots } from "./root-journal.js";

/**
 * A root's bytes: as a stored node, else as the newest journal event holding
 * them (given the journal). Only a root may be found there; any other node
 * is a row.
 */
export async function readRootBytes(
  executor: Executor,
  journal: JournalRoots | undefined,
  id: Uint8Array,
): Promise<NodeBytes> {
  const stored = await readNodeBytes(executor, id);
  if (!stored.missing || journal === undefined) return stored;
  const held = await journal.heldBytes(executor, id);
  return held === undefined ? stored : { bytes: held };
}
