/**
 * The provider's record of one open database: why there is exactly one per
 * canonical location (see docs/architecture.md, "One entry per file"), and
 * the state every lease of it shares.
 */
import type { DriverConnection } from "../port/driver.js";
import { RunledgerError } from "../port/errors.js";
import { TurnQueue } from "../port/turn-queue.js";

export type EntryState = "opening" | "ready" | "poisoned" | "closing" | "closed";

/**
 * The one authoritative entry for a canonical location: the physical
 * connection, the FIFO queue every operation waits in, the savepoint counter,
 * and the lifecycle state. The provider owns entries; leases only point at them.
 */
export class Entry {
  readonly location: string;
  readonly connection: DriverConnection;
  /** Opened with `readOnly`: its connection refuses writes, and so do its leases. */
  readonly readOnly: boolean;
  readonly queue = new TurnQueue();
  state: EntryState = "opening";
  leases = 0;
  /**
   * Cancels the pending idle close, if any. A function rather than the timer
   * handle, so core's published types name no runtime's timer type.
   */
  cancelIdle: (() => void) | undefined;
  #poison: RunledgerError | undefined;

  constructor(location: string, connection: DriverConnection, readOnly = false) {
    this.location = location;
    this.connection = connection;
    this.readOnly = readOnly;
  }

  /** The provider's key: a read-only entry is another connection than the writable one. */
  get key(): string {
    return entryKey(this.location, this.readOnly);
  }

  /** Marks the entry unusable after a failed cleanup, and returns the error to throw. */
  poison(failure: unknown, cleanupFailure: unknown): RunledgerError {
    this.#poison ??= new RunledgerError(
      "poisoned",
      `the connection to ${this.location} is in an unknown state: a rollback failed after an ` +
        "error; release every lease of it and open the location again",
      { cause: failure, details: { failure, cleanupFailure } },
    );
    this.state = "poisoned";
    return this.#poison;
  }

  /** The error every call on a poisoned entry gets: the original one, carrying both failures. */
  get poisonError(): RunledgerError | undefined {
    return this.#poison;
  }
}

/** The key an entry is held under: its canonical location, marked when read-only. */
export function entryKey(location: string, readOnly: boolean): string {
  return readOnly ? `read-only:${location}` : location;
}
