/**
 * Leases: the handles callers hold on an entry. Kept apart from the
 * provider because a lease is what callers use (transact, read, release),
 * while the provider only hands leases out and takes them back.
 */
import type { AsyncContext } from "../port/driver.js";
import { RunledgerError } from "../port/errors.js";
import { Done, promised } from "../port/turn-queue.js";
import { runReadTransaction, type WriteOptions, writeTransaction } from "../transaction/owner.js";
import type { ReadScope, WriteScope } from "../transaction/scope.js";
import type { Entry } from "./entry.js";

/**
 * The async-context mark of an operation in progress on an entry: which
 * entry, and which lease holds its turn. Work that outlives the operation (a
 * timer set inside the callback) keeps the mark but sees it inactive, so only
 * truly nested calls are refused.
 */
interface Turn {
  readonly entry: Entry;
  readonly lease: Lease;
  active: boolean;
}

/** What a lease needs from the provider that handed it out. */
export interface LeaseOwner {
  readonly closed: boolean;
  readonly busyTimeoutMs: number;
  readonly asyncContext: AsyncContext | undefined;
  releaseLease(entry: Entry): Promise<void>;
  discardPoisoned(entry: Entry): Promise<void>;
}

/**
 * A handle on one entry. Leases share the entry's connection and queue;
 * releasing one never disturbs the others. Operations on a lease — from any
 * number of independent async chains — wait their turn in call order with
 * every other operation on the entry, and never fail for being concurrent.
 * The one call refused (`transaction_reentered`) is a `transact` or `read`
 * made from inside a running callback of the same entry, through this lease
 * or another: it would wait for the turn its own caller holds, forever. That
 * is told apart from concurrency by the driver's async context; a driver
 * without one cannot tell them apart, so there every call queues (and a
 * nested call waits for itself — docs/writing-an-adapter.md asks adapters
 * for a context).
 */
export class Lease {
  readonly #entry: Entry;
  readonly #owner: LeaseOwner;
  #released = false;
  /**
   * @internal Whether the open that made this lease ran the entry's establish
   * hook itself, with its own request — rather than finding the entry open, or
   * joining another open's opening: what the hook checked, it checked for this caller.
   */
  readonly established: boolean;

  /** @internal Leases come from `ConnectionProvider.open`. */
  constructor(entry: Entry, owner: LeaseOwner, established = false) {
    this.#entry = entry;
    this.#owner = owner;
    this.established = established;
  }

  /** The canonical location this lease reaches. */
  get location(): string {
    return this.#entry.location;
  }

  /** Whether `release` was called. */
  get released(): boolean {
    return this.#released;
  }

  /** Whether this lease came from a read-only open (it then refuses `transact`). */
  get readOnly(): boolean {
    return this.#entry.readOnly;
  }

  /**
   * The only way to write: BEGIN IMMEDIATE → fn(tx) → COMMIT, ROLLBACK on any
   * throw. `options` is the run API's (`RunLease.transact`'s `optimistic`).
   */
  transact<T>(
    fn: (tx: WriteScope) => Promise<T>,
    /** @internal */ options?: WriteOptions,
  ): Promise<T> {
    if (this.#entry.readOnly) {
      return Promise.reject(
        new RunledgerError(
          "read_only",
          `cannot write to ${this.location}: it was opened with { readOnly: true }; ` +
            "open it without readOnly to write (nothing was written)",
        ),
      );
    }
    return this.#operate("transact", () =>
      writeTransaction(this.#entry, fn, this.#owner.busyTimeoutMs, options),
    );
  }

  /** A consistent snapshot; any write inside it fails with `write_in_read`. */
  read<T>(fn: (reader: ReadScope) => Promise<T>): Promise<T> {
    return this.#operate("read", () => runReadTransaction(this.#entry, fn));
  }

  /** Gives the lease back. Harmless to call twice. */
  async release(): Promise<void> {
    if (this.#released) return;
    this.#released = true;
    await this.#owner.releaseLease(this.#entry);
  }

  [Symbol.asyncDispose](): Promise<void> {
    return this.release();
  }

  #operate<T>(action: string, operation: () => Promise<T> | Done<T>): Promise<T> {
    const context = this.#owner.asyncContext;
    try {
      this.#checkUsable(action);
      const outer = context?.getStore() as Turn | undefined;
      if (outer?.entry === this.#entry && outer.active)
        throw reentered(action, outer.lease === this);
    } catch (error) {
      return Promise.reject(error);
    }
    return this.#entry.queue.run(() => {
      // Queued before a close or a release, it still runs; poisoning stops it.
      const poisoned = this.#entry.poisonError;
      if (poisoned !== undefined) return Promise.reject(poisoned);
      const turn: Turn = { entry: this.#entry, lease: this, active: true };
      let answer: Promise<T> | Done<T>;
      try {
        answer = context === undefined ? operation() : context.run(turn, operation);
      } catch (error) {
        answer = Promise.reject(error);
      }
      // Finished before returning (a step on a synchronous driver): the turn is over now.
      if (answer instanceof Done && this.#entry.state !== "poisoned") {
        turn.active = false;
        return answer;
      }
      return promised(answer).then(
        (value) => this.#endTurn(turn, () => value),
        (error: unknown) =>
          this.#endTurn(turn, () => {
            throw error;
          }),
      );
    });
  }

  /** The turn's operation settled: it is over, and a poisoned entry is discarded before `outcome`. */
  #endTurn<T>(turn: Turn, outcome: () => T): T | Promise<T> {
    turn.active = false;
    if (this.#entry.state !== "poisoned") return outcome();
    return this.#owner.discardPoisoned(this.#entry).then(outcome);
  }

  #checkUsable(action: string): void {
    if (this.#released) {
      throw new RunledgerError(
        "lease_released",
        `cannot ${action}: this lease was released; open the location again for a new lease`,
      );
    }
    const poisoned = this.#entry.poisonError;
    if (poisoned !== undefined) throw poisoned;
    if (this.#owner.closed) {
      throw new RunledgerError(
        "provider_closed",
        `cannot ${action}: the store that issued this lease is closed; create a new store`,
      );
    }
  }
}

/** A call from inside a running callback of the same entry: it could only wait for itself. */
function reentered(action: string, sameLease: boolean): RunledgerError {
  const holder = sameLease ? "this lease's" : "another lease's";
  return new RunledgerError(
    "transaction_reentered",
    `cannot ${action}: this call comes from inside ${holder} running transact/read callback on ` +
      "the same location, and would wait for that callback to finish; inside a transaction use " +
      "its tx (tx.savepoint to nest), and start other work after the callback returns",
  );
}
