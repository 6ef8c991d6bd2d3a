/**
 * A provider's kept staged database: the part every new database of its kind
 * holds alike, built once and committed, from which each new database is
 * placed whole.
 *
 * Why: building the schema is most of what building a new database in memory
 * costs — for a run, SQLite parsing and writing its tables takes 0.43 ms,
 * against 0.07 ms for the run's own row, a copy of the image and a rollback
 * (docs/benchmarks.md, 2026-12-07). So the first staged database a driver
 * gives a provider is kept: the shared part (`Initialize.shared`) is written
 * into it once, and each creation then writes its own part (`each`) in a
 * transaction on it, places a copy of what that transaction sees
 * (`StagedDatabase.placeCopy`) and rolls back, leaving the template as it was
 * for the next one.
 *
 * Its promises are staging's own (port/staged-file.ts): the same bytes — the
 * same statements in the same order as a creation in place, only with a
 * commit between the shared part and the rest, which an in-memory database's
 * pages do not record — and whole or not at all. A creation that fails
 * leaves the template as it was. One whose rollback fails poisons it, and the
 * provider stages a new one for the next creation.
 */
import type { StagedDatabase } from "../port/driver.js";
import { runDiscardedTransaction, runWriteTransaction } from "../transaction/owner.js";
import { Entry } from "./entry.js";
import type { Initialize } from "./provider-options.js";

/** A staged database that places copies. */
export type CopyingStagedDatabase = StagedDatabase & {
  placeCopy(location: string): Promise<boolean>;
};

export class StagedTemplate<Create> {
  readonly #entry: Entry;
  readonly #staged: CopyingStagedDatabase;
  readonly #initialize: Initialize<Create>;
  readonly #busyTimeoutMs: number;

  private constructor(
    staged: CopyingStagedDatabase,
    initialize: Initialize<Create>,
    busyTimeoutMs: number,
  ) {
    this.#entry = new Entry("a staged database", staged);
    this.#entry.state = "ready";
    this.#staged = staged;
    this.#initialize = initialize;
    this.#busyTimeoutMs = busyTimeoutMs;
  }

  /** Writes the shared part into `staged` and keeps it; `staged` is closed if that fails. */
  static async build<Create>(
    staged: CopyingStagedDatabase,
    initialize: Initialize<Create>,
    busyTimeoutMs: number,
  ): Promise<StagedTemplate<Create>> {
    const template = new StagedTemplate(staged, initialize, busyTimeoutMs);
    try {
      await runWriteTransaction(template.#entry, (tx) => initialize.shared(tx), busyTimeoutMs);
    } catch (error) {
      await staged.close().catch(() => undefined);
      throw error;
    }
    return template;
  }

  /** False once it is poisoned or closed: the provider then stages another. */
  get usable(): boolean {
    return this.#entry.state === "ready";
  }

  /**
   * Places a new database at `location`: `create`'s own part written on the
   * template, a copy placed, the template rolled back. False when something
   * is at `location` (nothing there changed). One creation at a time.
   */
  place(location: string, create: Create): Promise<boolean> {
    return this.#entry.queue.run(() =>
      runDiscardedTransaction(
        this.#entry,
        async (tx) => {
          await this.#initialize.each(tx, create);
          return this.#staged.placeCopy(location);
        },
        this.#busyTimeoutMs,
      ),
    );
  }

  /** Closes the kept database once the creation in progress, if any, has finished. */
  async close(): Promise<void> {
    if (this.#entry.state === "closed") return;
    if (this.#entry.state !== "poisoned") this.#entry.state = "closing";
    await this.#entry.queue.drained();
    this.#entry.state = "closed";
    await this.#staged.close();
  }
}
