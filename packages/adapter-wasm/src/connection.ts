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
} from "@runledger/core/port";
import {
  applySettings,
  isRunledgerError,
  normalizeInteger,
  plainBytes,
  RunledgerError,
} from "@runledger/core/port";
import type wasm from "node-sqlite3-wasm";
import { translate } from "./errors.js";

const BEGIN_SQL: Record<BeginMode, string> = {
  immediate: "BEGIN IMMEDIATE",
  deferred: "BEGIN DEFERRED",
};

/** What changed after a statement: read on the same connection, right after it. */
const CHANGES_SQL =
  "SELECT changes() AS changes, total_changes() AS total, last_insert_rowid() AS rowid";

export class WasmConnection implements DriverConnection {
  readonly #db: wasm.Database;
  readonly #busyTimeoutMs: number;
  #total = 0;
  #transaction: WasmTransaction | undefined;

  constructor(db: wasm.Database, busyTimeoutMs: number) {
    this.#db = db;
    this.#busyTimeoutMs = busyTimeoutMs;
  }

  execute(sql: string, params: readonly SqlValue[] = []): Promise<QueryResult> {
    return this.whileBusy(() => this.run(sql, params));
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
    for (const row of rows) fromDriverRow(row);
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
    return this.whileBusy(() => this.script(sql));
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
   * the thread (this build sleeps synchronously).
   */
  async whileBusy<T>(call: () => T): Promise<T> {
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

  async begin(mode: BeginMode): Promise<DriverTransaction> {
    if (this.#transaction !== undefined) {
      throw new RunledgerError(
        "transaction_active",
        "a transaction is already open on this connection; commit or roll it back first",
      );
    }
    await this.whileBusy(() => this.run(BEGIN_SQL[mode], []));
    const transaction = new WasmTransaction(this, () => {
      this.#transaction = undefined;
    });
    this.#transaction = transaction;
    return transaction;
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

class WasmTransaction implements DriverTransaction {
  readonly #connection: WasmConnection;
  readonly #settle: () => void;
  #open = true;

  constructor(connection: WasmConnection, settle: () => void) {
    this.#connection = connection;
    this.#settle = settle;
  }

  /** SQLite's own answer (sqlite3_get_autocommit): false once it rolled the transaction back itself. */
  get active(): boolean {
    return this.#open && this.#connection.inTransaction;
  }

  execute(sql: string, params: readonly SqlValue[] = []): Promise<QueryResult> {
    this.#checkOpen();
    return this.#connection.whileBusy(() => this.#connection.run(sql, params));
  }

  executeScript(sql: string): Promise<void> {
    this.#checkOpen();
    return this.#connection.whileBusy(() => this.#connection.script(sql));
  }

  async commit(): Promise<void> {
    this.#checkOpen();
    // A failed COMMIT leaves the transaction open: the owner rolls back.
    await this.#connection.whileBusy(() => this.#connection.run("COMMIT", []));
    this.#finish();
  }

  async rollback(): Promise<void> {
    this.#checkOpen();
    try {
      if (this.#connection.inTransaction) this.#connection.run("ROLLBACK", []);
    } finally {
      this.#finish();
    }
  }

  #finish(): void {
    this.#open = false;
    this.#settle();
  }

  #checkOpen(): void {
    if (!this.#open) {
      throw new RunledgerError(
        "transaction_closed",
        "this transaction has already committed or rolled back; start a new one",
      );
    }
  }
}

/** A row as the port promises it: exact integers, plain Uint8Array blobs. */
function fromDriverRow(row: Record<string, unknown>): void {
  for (const key in row) {
    const value = row[key];
    if (typeof value === "bigint") row[key] = normalizeInteger(value);
    else if (value instanceof Uint8Array) row[key] = plainBytes(value);
  }
}
