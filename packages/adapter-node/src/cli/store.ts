import { type RunLease, RunStore, type RunStoreOptions, type StopReason } from "@runledger/core";
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

/** A stop reason in words. */
export function describeStop(reason: StopReason | null): string {
  if (reason === null) return "no stop reason";
  if ("event" in reason) return `stopped by journal event ${reason.event}`;
  return `stopped by host ${reason.host}, code ${reason.code}`;
}
