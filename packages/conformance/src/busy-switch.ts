/**
 * A driver wrapper for the first openers' WAL switch: it answers SQLITE_BUSY
 * to the journal-mode switch a set number of times, then lets it through.
 */
import {
  type BeginMode,
  type ConnectionSettings,
  type Driver,
  type DriverConnection,
  type DriverTransaction,
  fromSqliteFailure,
  type QueryResult,
  type SqlValue,
} from "@runledger/core/port";

/** What the wrapper answered to one switch of the journal mode. */
export type SwitchAnswer = "busy" | "switched" | "failed";

/**
 * Wraps a driver so that the switch to a journal mode answers SQLITE_BUSY a
 * set number of times before it is let through: what a first opener meets
 * when another process holds the file's lock at that moment, made certain.
 * Without it SQLite's own busy handler absorbs nearly every such collision,
 * and no test would notice core's retry around the switch gone.
 *
 * The adapters run `PRAGMA journal_mode` inside their own `configure`, not
 * through `execute`, so the wrapper answers at `configure` — before the
 * adapter runs anything, as SQLite answers BUSY before the pragma changes
 * anything. The answer is the RunledgerError an adapter makes of SQLite's
 * (`fromSqliteFailure`), its cause an error shaped like the driver's own.
 * A `configure` without a journal mode (durability only) passes untouched.
 */
export class BusyAtJournalSwitch {
  readonly driver: Driver;
  /** Every journal-mode switch asked for, in order, and what it was answered. */
  readonly answers: SwitchAnswer[] = [];
  #busyLeft: number;

  /** `busyTimes`: how many switches answer busy before one is let through (Infinity: every one). */
  constructor(inner: Driver, busyTimes: number) {
    this.#busyLeft = busyTimes;
    this.driver = {
      name: `${inner.name}+busy-switch`,
      canonicalize: (location) => inner.canonicalize(location),
      open: async (location, options) =>
        new BusySwitchConnection(await inner.open(location, options), this),
      ...(inner.asyncContext === undefined ? {} : { asyncContext: inner.asyncContext }),
      ...(inner.hash === undefined ? {} : { hash: inner.hash }),
    };
  }

  /** @internal Called by each connection's `configure`. */
  async configure(inner: DriverConnection, settings: ConnectionSettings): Promise<void> {
    if (settings.journalMode === undefined) return inner.configure(settings);
    if (this.#busyLeft > 0) {
      this.#busyLeft--;
      this.answers.push("busy");
      const driverError = Object.assign(new Error("database is locked"), { code: "SQLITE_BUSY" });
      throw fromSqliteFailure(
        "SQLITE_BUSY",
        `statement failed: database is locked (injected at PRAGMA journal_mode = ${settings.journalMode})`,
        driverError,
        { injected: true },
      );
    }
    try {
      await inner.configure(settings);
    } catch (error) {
      this.answers.push("failed");
      throw error;
    }
    this.answers.push("switched");
  }
}

/** Every call passed to the real connection, but `configure`, which asks the wrapper first. */
class BusySwitchConnection implements DriverConnection {
  readonly #inner: DriverConnection;
  readonly #wrapper: BusyAtJournalSwitch;

  constructor(inner: DriverConnection, wrapper: BusyAtJournalSwitch) {
    this.#inner = inner;
    this.#wrapper = wrapper;
  }

  get remote(): boolean | undefined {
    return this.#inner.remote;
  }

  execute(sql: string, params?: readonly SqlValue[]): Promise<QueryResult> {
    return this.#inner.execute(sql, params);
  }

  executeScript(sql: string): Promise<void> {
    return this.#inner.executeScript(sql);
  }

  begin(mode: BeginMode): Promise<DriverTransaction> {
    return this.#inner.begin(mode);
  }

  configure(settings: ConnectionSettings): Promise<void> {
    return this.#wrapper.configure(this.#inner, settings);
  }

  close(): Promise<void> {
    return this.#inner.close();
  }
}
