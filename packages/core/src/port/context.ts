/**
 * Injected time and ids. Every store takes `clock` and `newId` options so
 * that tests — and byte-identical files across adapters — are reproducible;
 * by default they are the runtime's clock and time-ordered UUIDs (version 7,
 * see ids.ts).
 */
import { timeOrderedId } from "./ids.js";

export interface InjectedContext {
  /** Milliseconds since the epoch. */
  readonly clock: () => number;
  /**
   * A fresh id, never returned before (event ids, txn ids, log ids). Event
   * ids are not re-checked on append — the run schema keeps no index on
   * them — so a generator that repeats one stores a run `verify` reports.
   */
  readonly newId: () => string;
}

export function injectedContext(options: {
  readonly clock?: () => number;
  readonly newId?: () => string;
}): InjectedContext {
  return {
    clock: options.clock ?? (() => Date.now()),
    newId: options.newId ?? (() => timeOrderedId()),
  };
}
