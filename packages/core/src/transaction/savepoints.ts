/**
 * Savepoint names and undo: allocated by core, never taken from callers, so
 * that nested work cannot collide with or release another's savepoint.
 */
import type { DriverTransaction } from "../port/driver.js";

/** What the transaction's owner does when undoing a savepoint does not go as planned. */
export interface SavepointCleanup {
  /**
   * SQLite or the server ended the whole transaction by itself (SQLITE_FULL,
   * a lost connection, …): the savepoint went with it and nothing is left to
   * undo. The transaction must never go on (a later statement would run
   * outside it), but the connection is sound.
   */
  ended(failure: unknown): void;
  /** The undo failed on a transaction still open: its state is unknown. */
  failed(failure: unknown, cleanupFailure: unknown): never;
}

/**
 * Names savepoints (never from user input) and undoes a savepoint.
 *
 * A savepoint is named by its depth: the first inside a transaction is
 * `runledger_sp_1`, one opened inside it `runledger_sp_2`, and so on. A
 * scope holds at most one open savepoint, so the open ones form a chain of
 * distinct depths and no name can collide with one still open. The same few
 * names recur, so their statements are prepared once and stay in the
 * driver's statement cache (a name per savepoint made two new statements to
 * prepare, and two cache evictions, every step).
 */
export class Savepoints {
  readonly #transaction: DriverTransaction;
  readonly #cleanup: SavepointCleanup;
  /**
   * Whether a savepoint on demand may wait to be opened (scope.ts,
   * `savepointOnDemand`): only where the transaction's `active` says at once
   * that SQLite ended it after a failed statement — a local connection,
   * which reads SQLite's own state. A server's client learns that only from
   * a later answer, and the undo of a savepoint is that answer: there every
   * savepoint is opened at once.
   */
  readonly deferrable: boolean;

  constructor(
    transaction: DriverTransaction,
    cleanup: SavepointCleanup,
    options: { readonly deferrable?: boolean } = {},
  ) {
    this.#transaction = transaction;
    this.#cleanup = cleanup;
    this.deferrable = options.deferrable === true;
  }

  /** The name of a savepoint opened at `depth` (1 for one opened on the transaction itself). */
  nameAt(depth: number): string {
    return `runledger_sp_${depth}`;
  }

  /**
   * ROLLBACK TO then RELEASE, after `failure`. When the transaction has
   * already ended (asked before, and again after a failed undo: a server may
   * tell only when it is sent the undo) the undo is done and `failure` keeps
   * its own code; a failure of either statement on a live transaction
   * poisons the entry.
   */
  async rollBack(name: string, failure: unknown): Promise<void> {
    if (!this.#transaction.active) return this.#cleanup.ended(failure);
    try {
      await this.#transaction.execute(`ROLLBACK TO ${name}`);
      await this.#transaction.execute(`RELEASE ${name}`);
    } catch (cleanupFailure) {
      if (!this.#transaction.active) return this.#cleanup.ended(failure);
      this.#cleanup.failed(failure, cleanupFailure);
    }
  }

  /** `rollBack` with its statements run now: only where the transaction offers `executeNow`. */
  rollBackNow(name: string, failure: unknown): void {
    if (!this.#transaction.active) {
      this.#cleanup.ended(failure);
      return;
    }
    try {
      this.#transaction.executeNow!(`ROLLBACK TO ${name}`, []);
      this.#transaction.executeNow!(`RELEASE ${name}`, []);
    } catch (cleanupFailure) {
      if (!this.#transaction.active) {
        this.#cleanup.ended(failure);
        return;
      }
      this.#cleanup.failed(failure, cleanupFailure);
    }
  }
}
