/**
 * The journal's side of the workspace's roots: every event records the root
 * current when it was written, the newest event's root is the current root,
 * and an event may hold a small root's bytes (workspace/roots.ts). The
 * workspace declares what it reads of them (JournalRoots,
 * workspace/root-journal.ts); these are the journal's reads that answer it,
 * the only statements on the journal's rows the workspace causes.
 */
import { toHex } from "../port/bytes.js";
import type { Executor } from "../port/driver.js";
import type { Row } from "../port/values.js";
import type { WriteScope } from "../transaction/scope.js";
import { EMPTY_ROOT_ID_BYTES } from "../workspace/node-encoding.js";
import type { JournalRoots, RootBase, RootRef } from "../workspace/root-journal.js";

/** The newest event: its sequence and root (the current root), its root's bytes when held, its digest. */
const HEAD =
  "SELECT sequence, root_id, root_node, digest FROM journal ORDER BY sequence DESC LIMIT 1";

/**
 * A root's bytes, from the newest event that holds them. No index serves
 * this (a step would pay a page a commit for one): the scan runs from the
 * newest event back, and only when a named root is not an object.
 */
const HELD = `SELECT root_node FROM journal
WHERE root_id = ? AND root_node IS NOT NULL ORDER BY sequence DESC LIMIT 1`;

/** The root an event records, with its bytes when the event holds them. */
const EVENT_ROOT = "SELECT root_id, root_node FROM journal WHERE sequence = ?";

const EVENTS =
  "SELECT sequence, event_id, root_id FROM journal WHERE sequence > ? ORDER BY sequence LIMIT ?";

/**
 * Each root the events record once, in the order the journal first recorded
 * them (consecutive roots share most of their paths, so a walk over them in
 * this order finds its nodes cached), with its bytes when an event holds them.
 */
const ROOTS = `SELECT root_id, max(root_node) AS root_node FROM journal
GROUP BY root_id ORDER BY min(sequence)`;

/**
 * The newest event — its sequence (0 before the first) and root, the current
 * one, with the root's bytes when the event holds them, and the event's
 * digest. Under the write lock this is exact.
 */
export async function readHead(executor: Executor): Promise<RootBase> {
  return headOf((await executor.execute(HEAD)).rows[0]);
}

/** `readHead`, read before this returns where the scope runs statements now; else undefined, nothing read. */
export function readHeadNow(scope: WriteScope): RootBase | undefined {
  const read = scope.executeNow(HEAD, []);
  return read === undefined ? undefined : headOf(read.rows[0]);
}

function headOf(row: Row | undefined): RootBase {
  if (row === undefined) return { sequence: 0, root: EMPTY_ROOT_ID_BYTES };
  const bytes = row.root_node;
  const head = {
    sequence: Number(row.sequence),
    root: row.root_id as Uint8Array,
    digest: row.digest as Uint8Array,
  };
  return bytes instanceof Uint8Array ? { ...head, rootBytes: bytes } : head;
}

/** A root as a row records it, with its bytes when the row holds them. */
function rootRef(id: unknown, bytes: unknown): RootRef {
  return bytes instanceof Uint8Array ? { id: id as Uint8Array, bytes } : { id: id as Uint8Array };
}

/** The journal's answers to what the workspace asks of it. */
export const JOURNAL_ROOTS: JournalRoots = Object.freeze({
  head: readHead,

  async heldBytes(executor: Executor, id: Uint8Array): Promise<Uint8Array | undefined> {
    const bytes = (await executor.execute(HELD, [id])).rows[0]?.root_node;
    return bytes instanceof Uint8Array ? bytes : undefined;
  },

  async eventRoot(executor: Executor, sequence: number): Promise<RootRef | undefined> {
    const row = (await executor.execute(EVENT_ROOT, [sequence])).rows[0];
    return row === undefined ? undefined : rootRef(row.root_id, row.root_node);
  },

  async events(executor: Executor, after: number, limit: number) {
    const { rows } = await executor.execute(EVENTS, [after, limit]);
    return rows.map((row) => ({
      sequence: Number(row.sequence),
      eventId: String(row.event_id),
      rootId: toHex(row.root_id as Uint8Array),
    }));
  },

  async roots(executor: Executor): Promise<RootRef[]> {
    return (await executor.execute(ROOTS)).rows.map((row) => rootRef(row.root_id, row.root_node));
  },
});
