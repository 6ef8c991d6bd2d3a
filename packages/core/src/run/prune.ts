/**
 * Pruning the journal: dropping its oldest events (`tx.workspace.prune`,
 * which then lets garbage collection free the roots only they retained).
 * The journal's rows are the journal's to delete, so the workspace asks
 * for it through its RootJournal.
 */
import type { Executor } from "../port/driver.js";
import { RunledgerError } from "../port/errors.js";

/**
 * Drops journal history before `before` (exclusive), recording in the
 * journal's anchor the digest the oldest event kept chains from, so that the
 * chain stays verifiable from there (./chain.ts). The newest event and the
 * event a stop reason names are never dropped: both are refused with
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
  // The oldest event kept chains from the last one dropped: the anchor says so.
  await executor.execute(MOVE_ANCHOR, [before, before - 1]);
  return (await executor.execute("DELETE FROM journal WHERE sequence < ?", [before])).changes;
}

/**
 * The journal's anchor after a prune before `before` (bound first, then
 * `before - 1`): event `before` chains from the digest of the event before
 * it — when that event is kept until now, so a prune that drops nothing
 * leaves the anchor as it was.
 */
const MOVE_ANCHOR = `INSERT INTO journal_anchor (singleton, sequence, digest)
SELECT 1, ?, digest FROM journal WHERE sequence = ?
ON CONFLICT (singleton) DO UPDATE SET sequence = excluded.sequence, digest = excluded.digest`;
