/**
 * How the commands open a run: existing runs only, read-only for the
 * commands that only read, always released and closed.
 */
import { type RunLease, RunStore, type RunStoreOptions, type StopReason } from "@runledger/core";
import { nodeDriver } from "../driver.js";

/**
 * Opens an existing run (never creating one: a file that is refused stays as
 * found), runs `fn` with its lease, then releases it and closes the store.
 * With `readOnly` the run is opened read-only: nothing in the file or its
 * directory changes (the read commands: inspect, verify, log, ls, cat).
 */
export async function withRun<T>(
  file: string,
  fn: (lease: RunLease, store: RunStore) => Promise<T>,
  options: Omit<RunStoreOptions, "driver"> & { readOnly?: boolean } = {},
): Promise<T> {
  const { readOnly, ...storeOptions } = options;
  const store = new RunStore({ ...storeOptions, driver: nodeDriver() });
  try {
    const lease = await store.open(file, readOnly === true ? { readOnly } : {});
    try {
      return await fn(lease, store);
    } finally {
      await lease.release();
    }
  } finally {
    await store.close();
  }
}

/** A stop reason in words. */
export function describeStop(reason: StopReason | null): string {
  if (reason === null) return "no stop reason";
  if ("event" in reason) return `stopped by journal event ${reason.event}`;
  return `stopped by host ${reason.host}, code ${reason.code}`;
}

/** Opens an existing run read-only (see `withRun`): for commands that never write. */
export function readRun<T>(file: string, fn: (lease: RunLease) => Promise<T>): Promise<T> {
  return withRun(file, fn, { readOnly: true });
}
