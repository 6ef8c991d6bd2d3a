import {
  type Executor,
  type RunLease,
  RunStore,
  type RunStoreOptions,
  type StopReason,
} from "@runledger/core";
import { nodeDriver } from "../driver.js";

/**
 * Opens an existing run (never creating one: a file that is refused stays as
 * found), runs `fn` with its lease, then releases it and closes the store.
 */
export async function withRun<T>(
  file: string,
  fn: (lease: RunLease, store: RunStore) => Promise<T>,
  options: Omit<RunStoreOptions, "driver"> = {},
): Promise<T> {
  const store = new RunStore({ ...options, driver: nodeDriver() });
  try {
    const lease = await store.open(file);
    try {
      return await fn(lease, store);
    } finally {
      await lease.release();
    }
  } finally {
    await store.close();
  }
}

/** Counts of what a run holds, read in one snapshot: O(rows) of small tables, no content read. */
export interface RunCounts {
  readonly events: number;
  readonly firstSequence: number | null;
  readonly lastSequence: number | null;
  readonly blobs: number;
  readonly chunks: number;
  readonly trees: number;
  readonly roots: number;
  readonly pins: number;
}

const COUNTS = `SELECT
  (SELECT count(*) FROM journal) AS events,
  (SELECT min(sequence) FROM journal) AS first,
  (SELECT max(sequence) FROM journal) AS last,
  (SELECT count(*) FROM workspace_blob) AS blobs,
  (SELECT count(*) FROM workspace_chunk) AS chunks,
  (SELECT count(*) FROM workspace_tree) AS trees,
  (SELECT count(*) FROM workspace_root) AS roots,
  (SELECT count(*) FROM workspace_pin) AS pins`;

export async function countObjects(executor: Executor): Promise<RunCounts> {
  const row = (await executor.execute(COUNTS)).rows[0]!;
  const n = (value: unknown) => (value === null ? null : Number(value));
  return {
    events: Number(row.events),
    firstSequence: n(row.first),
    lastSequence: n(row.last),
    blobs: Number(row.blobs),
    chunks: Number(row.chunks),
    trees: Number(row.trees),
    roots: Number(row.roots),
    pins: Number(row.pins),
  };
}

/** A stop reason in words. */
export function describeStop(reason: StopReason | null): string {
  if (reason === null) return "no stop reason";
  if ("event" in reason) return `stopped by journal event ${reason.event}`;
  return `stopped by host ${reason.host}, code ${reason.code}`;
}
