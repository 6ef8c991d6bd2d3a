/**
 * Leases: the handles callers hold on an entry. Kept apart from the
 * provider because a lease is what callers use (transact, read, release),
 * while the provider only hands leases out and takes them back.
 */
import type { AsyncContext } from "../port/driver.js";
import { RunledgerError } from "../port/errors.js";
import { runReadTransaction, runWriteTransaction } from "../transaction/owner.js";
import type { ReadScope, WriteScope } from "../transaction/scope.js";
import type { Entry } from "./entry.js";

/**
 * The async-context mark of an operation in progress on an entry. Work that
 * outlives the operation (a timer set inside the callback) keeps the mark but
 * sees it inactive, so only truly nested calls are refused.
 */
interface Turn {
  readonly entry: Entry;
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
 * releasing one never disturbs the others. One lease runs one operation at a
 * time: calling `transact` or `read` on a lease whose operation is still
 * running is refused (`transaction_reentered`) because, from inside the
 * callback, it could only wait for itself. Where the driver gives an async
 * context, the same call from inside a callback through *another* lease of
 * the same entry is refused too. Concurrent work takes a second lease
 * (leases of one location queue in arrival order).
 */
export class Lease {
  readonly #entry: Entry;
  readonly #owner: LeaseOwner;
  #released = false;
  #running = false;

  /** @internal Leases come from `ConnectionProvider.open`. */
  constructor(entry: Entry, owner: LeaseOwner) {
    this.#entry = entry;
    this.#owner = owner;
  }

  /** The canonical location this lease reaches. */
  get location(): string {
    return this.#entry.location;
  }

  /** Whether this lease came from a read-only open (it then refuses `transact`). */
  get readOnly(): boolean {
    return this.#entry.readOnly;
  }

  /** The only way to write: BEGIN IMMEDIATE → fn(tx) → COMMIT, ROLLBACK on any throw. */
  transact<T>(fn: (tx: WriteScope) => Promise<T>): Promise<T> {
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
      runWriteTransaction(this.#entry, fn, this.#owner.busyTimeoutMs),
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

  async #operate<T>(action: string, operation: () => Promise<T>): Promise<T> {
    this.#checkUsable(action);
    const context = this.#owner.asyncContext;
    const outer = context?.getStore() as Turn | undefined;
    if (this.#running || (outer?.entry === this.#entry && outer.active)) {
      throw new RunledgerError(
        "transaction_reentered",
        `cannot ${action}: this lease's previous transact/read has not finished. Inside a ` +
          "transaction use its tx (tx.savepoint to nest) and await every call on tx before " +
          "returning; for concurrent work open another lease",
      );
    }
    this.#running = true;
    try {
      return await this.#entry.queue.run(async () => {
        // Queued before a close or a release, it still runs; poisoning stops it.
        const poisoned = this.#entry.poisonError;
        if (poisoned !== undefined) throw poisoned;
        const turn: Turn = { entry: this.#entry, active: true };
        try {
          return await (context === undefined ? operation() : context.run(turn, operation));
        } finally {
          turn.active = false;
          if (this.#entry.state === "poisoned") await this.#owner.discardPoisoned(this.#entry);
        }
      });
    } finally {
      this.#running = false;
    }
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
