/**
 * Savepoint names and undo: allocated by core, never taken from callers, so
 * that nested work cannot collide with or release another's savepoint.
 */
import type { Executor } from "../port/driver.js";

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
  readonly #executor: Executor;
  readonly #onCleanupFailure: (failure: unknown, cleanupFailure: unknown) => never;

  constructor(
    executor: Executor,
    onCleanupFailure: (failure: unknown, cleanupFailure: unknown) => never,
  ) {
    this.#executor = executor;
    this.#onCleanupFailure = onCleanupFailure;
  }

  /** The name of a savepoint opened at `depth` (1 for one opened on the transaction itself). */
  nameAt(depth: number): string {
    return `runledger_sp_${depth}`;
  }

  /** ROLLBACK TO then RELEASE; a failure of either poisons the entry. */
  async rollBack(name: string, failure: unknown): Promise<void> {
    try {
      await this.#executor.execute(`ROLLBACK TO ${name}`);
      await this.#executor.execute(`RELEASE ${name}`);
    } catch (cleanupFailure) {
      this.#onCleanupFailure(failure, cleanupFailure);
    }
  }
}
