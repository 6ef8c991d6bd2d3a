/**
 * Savepoint names and undo: allocated by core, never taken from callers, so
 * that nested work cannot collide with or release another's savepoint.
 */
import type { Executor } from "../port/driver.js";

/**
 * Allocates savepoint names (never from user input) and undoes a savepoint.
 * The names are unique per entry for the connection's whole life, so a name
 * can never collide with one still open.
 */
export class Savepoints {
  readonly #executor: Executor;
  readonly #allocate: () => number;
  readonly #onCleanupFailure: (failure: unknown, cleanupFailure: unknown) => never;

  constructor(
    executor: Executor,
    allocate: () => number,
    onCleanupFailure: (failure: unknown, cleanupFailure: unknown) => never,
  ) {
    this.#executor = executor;
    this.#allocate = allocate;
    this.#onCleanupFailure = onCleanupFailure;
  }

  next(): string {
    return `runledger_sp_${this.#allocate()}`;
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
