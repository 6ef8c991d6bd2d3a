/**
 * Pruning and garbage collection. A root is retained while the current-root
 * pointer, a journal event or a pin names it; a tree while a retained root
 * reaches it; a blob while a retained tree names it; a chunk while a retained
 * blob lists it. Collection deletes exactly what nothing retains.
 */

import type { Executor } from "../port/driver.js";
import { RunledgerError } from "../port/errors.js";

export interface GarbageReport {
  readonly roots: number;
  readonly trees: number;
  readonly blobs: number;
  readonly chunks: number;
}

const LIVE_TREES = `WITH RECURSIVE live(tree_id) AS (
  SELECT tree_id FROM workspace_root WHERE root_id IN (
    SELECT root_id FROM workspace_current
    UNION SELECT root_id FROM journal
    UNION SELECT root_id FROM workspace_pin)
  UNION
  SELECT e.subtree_id FROM workspace_tree_entry e JOIN live l ON e.tree_id = l.tree_id
  WHERE e.subtree_id IS NOT NULL
)`;

const DELETE_ROOTS = `DELETE FROM workspace_root WHERE root_id NOT IN (
  SELECT root_id FROM workspace_current
  UNION SELECT root_id FROM journal
  UNION SELECT root_id FROM workspace_pin)`;
const DELETE_TREES = `${LIVE_TREES}
DELETE FROM workspace_tree WHERE tree_id NOT IN (SELECT tree_id FROM live)`;
const DELETE_BLOBS = `DELETE FROM workspace_blob WHERE digest NOT IN (
  SELECT blob_digest FROM workspace_tree_entry WHERE blob_digest IS NOT NULL)`;
const DELETE_CHUNKS = `DELETE FROM workspace_chunk WHERE chunk_digest NOT IN (
  SELECT chunk_digest FROM workspace_blob_chunk)`;

/** Deletes every root, tree, blob and chunk that nothing retains. */
export async function collectGarbage(executor: Executor): Promise<GarbageReport> {
  const roots = (await executor.execute(DELETE_ROOTS)).changes;
  const trees = (await executor.execute(DELETE_TREES)).changes;
  const blobs = (await executor.execute(DELETE_BLOBS)).changes;
  const chunks = (await executor.execute(DELETE_CHUNKS)).changes;
  return { roots, trees, blobs, chunks };
}

/**
 * Drops journal history before `before` (exclusive). The newest event and
 * the event a stop reason names are never dropped: both are refused with
 * `invalid_argument` before anything is deleted.
 */
export async function pruneJournal(executor: Executor, before: number): Promise<number> {
  if (!Number.isSafeInteger(before) || before < 1) {
    throw new RunledgerError(
      "invalid_argument",
      "prune takes a journal sequence (a whole number >= 1)",
    );
  }
  const { rows } = await executor.execute(
    "SELECT (SELECT max(sequence) FROM journal) AS last, (SELECT stop_event FROM run) AS stop",
  );
  const last = rows[0]?.last === null ? 0 : Number(rows[0]?.last);
  const stop = rows[0]?.stop === null ? undefined : Number(rows[0]?.stop);
  if (before > last) {
    throw new RunledgerError(
      "invalid_argument",
      `cannot prune before ${before}: the newest event is ${last} and is always kept`,
    );
  }
  if (stop !== undefined && stop < before) {
    throw new RunledgerError(
      "invalid_argument",
      `cannot prune before ${before}: the run's stop reason names event ${stop}`,
    );
  }
  return (await executor.execute("DELETE FROM journal WHERE sequence < ?", [before])).changes;
}
