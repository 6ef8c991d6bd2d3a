/**
 * `snapshot.counts()`: how much a run holds, for operators and tests, in one
 * statement.
 */
import type { Executor } from "../port/driver.js";
import { WORKSPACE_COUNTS } from "../workspace/counts.js";

/** How much a run holds: its journal's events and range, and the workspace's stored objects. */
export interface RunCounts {
  readonly events: number;
  /** The oldest event still in the journal (null when it is empty; pruning moves it). */
  readonly firstSequence: number | null;
  /** The newest event (null when the journal is empty). */
  readonly lastSequence: number | null;
  /** Stored objects: directory nodes and files' content (or a large file's piece list). */
  readonly objects: number;
  /** Pieces of large files. */
  readonly chunks: number;
  /** Distinct roots the journal records. */
  readonly roots: number;
  readonly pins: number;
}

const COUNTS = `SELECT
  (SELECT count(*) FROM journal) AS events,
  (SELECT min(sequence) FROM journal) AS first,
  (SELECT max(sequence) FROM journal) AS last,
  (SELECT count(DISTINCT root_id) FROM journal) AS roots,
  ${WORKSPACE_COUNTS}`;

/**
 * One statement. Each count scans its table (or SQLite's smallest index of
 * it): O(rows), unlike recognition's O(schema). No content is decoded.
 */
export async function countRun(executor: Executor): Promise<RunCounts> {
  const row = (await executor.execute(COUNTS)).rows[0]!;
  const orNull = (value: unknown) => (value === null ? null : Number(value));
  return {
    events: Number(row.events),
    firstSequence: orNull(row.first),
    lastSequence: orNull(row.last),
    objects: Number(row.objects),
    chunks: Number(row.chunks),
    roots: Number(row.roots),
    pins: Number(row.pins),
  };
}
