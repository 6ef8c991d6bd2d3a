/**
 * One node-sqlite3-wasm database handle behind the port. The driver is
 * synchronous and its busy handler would block the thread, so SQLite's own
 * busy timeout is 0 and this class waits for a lock itself, with timers that
 * leave the event loop free, up to the busy timeout it was opened with.
 */
import type {
  BeginMode,
  ConnectionSettings,
  DriverConnection,
  DriverTransaction,
  QueryResult,
  Row,
  SqlValue,
  SynchronousSession,
} from "@runledger/core/port";
import {
  applySettings,
  isRunledgerError,
  normalizeInteger,
  normalizeRow,
  SynchronousTransactions,
} from "@runledger/core/port";
import type wasm from "node-sqlite3-wasm";
import { translate } from "./errors.js";

/** What changed after a statement: read on the same connection, right after it. */
const CHANGES_SQL =
  "SELECT changes() AS changes, total_changes() AS total, last_insert_rowid() AS rowid";

export class WasmConnection implements DriverConnection, SynchronousSession {
  readonly #db: wasm.Database;
  readonly #busyTimeoutMs: number;
  readonly #transactions = new SynchronousTransactions(this);
  /** Busy is retried on timers (`settle`): every statement goes through it. */
  readonly runsNow = false;
  readonly commitsNow = false;
  #total = 0;

  constructor(db: wasm.Database, busyTimeoutMs: number) {
    this.#db = db;
    this.#busyTimeoutMs = busyTimeoutMs;
  }

  execute(sql: string, params: readonly SqlValue[] = []): Promise<QueryResult> {
    return this.settle(() => this.run(sql, params));
  }

  /** Runs one statement; `changes` is known from total_changes() moving. */
  run(sql: string, params: readonly SqlValue[]): QueryResult {
    let rows: Record<string, unknown>[];
    try {
      const statement = this.#db.prepare(sql);
      try {
        rows = statement.all(params.length === 0 ? undefined : (params as wasm.SQLiteValue[]));
      } finally {
        statement.finalize();
      }
    } catch (error) {
      throw translate(error, "statement failed");
    }
    for (const row of rows) normalizeRow(row);
    const after = this.#db.get(CHANGES_SQL) as {
      changes: number;
      total: number;
      rowid: number | bigint;
    };
    const wrote = after.total !== this.#total;
    this.#total = after.total;
    return {
      rows: rows as Row[],
      changes: wrote ? after.changes : 0,
      lastInsertRowid: wrote
        ? typeof after.rowid === "bigint"
          ? normalizeInteger(after.rowid)
          : after.rowid
        : undefined,
    };
  }

  get inTransaction(): boolean {
    return this.#db.isOpen && this.#db.inTransaction;
  }

  executeScript(sql: string): Promise<void> {
    return this.settle(() => this.script(sql));
  }

  script(sql: string): void {
    try {
      this.#db.exec(sql);
    } catch (error) {
      throw translate(error, "script failed");
    }
    // total_changes() needs no lock: reading it never waits on another connection.
    this.#total = (this.#db.get("SELECT total_changes() AS total") as { total: number }).total;
  }

  /**
   * Retries `call` while it fails `busy`, pausing on timers, until the busy
   * timeout has passed: SQLite's busy handler would do the same but block
   * the thread (this build sleeps synchronously). The transactions the
   * connection begins run their calls through it too.
   */
  async settle<T>(call: () => T): Promise<T> {
    const started = Date.now();
    let pause = 1;
    for (;;) {
      try {
        return call();
      } catch (error) {
        const left = this.#busyTimeoutMs - (Date.now() - started);
        if (!isRunledgerError(error, "busy") || left <= 0) throw error;
        await new Promise((resolve) => setTimeout(resolve, Math.min(pause, left)));
        pause = Math.min(pause * 2, 20);
      }
    }
  }

  begin(mode: BeginMode): Promise<DriverTransaction> {
    return this.#transactions.begin(mode);
  }

  async configure(settings: ConnectionSettings): Promise<void> {
    // WAL without shared memory: this connection keeps the file locked (see driver.ts).
    if (settings.journalMode === "wal") await this.executeScript("PRAGMA locking_mode = EXCLUSIVE");
    await applySettings(this, settings);
    if (settings.journalMode === "delete") await this.executeScript("PRAGMA locking_mode = NORMAL");
  }

  async close(): Promise<void> {
    if (!this.#db.isOpen) return;
    try {
      this.#db.close();
    } catch (error) {
      throw translate(error, "close failed");
    }
  }
}
