import type {
  BeginMode,
  ConnectionSettings,
  DriverConnection,
  DriverTransaction,
  QueryResult,
  SqlValue,
} from "@runledger/core/port";
import { applySettings, normalizeInteger, RunledgerError } from "@runledger/core/port";
import type BetterSqlite3 from "better-sqlite3";
import { translate } from "./errors.js";
import { fromDriverRow } from "./values.js";

type Database = BetterSqlite3.Database;
type Statement = BetterSqlite3.Statement<unknown[], Record<string, unknown>>;

const BEGIN_SQL: Record<BeginMode, string> = {
  immediate: "BEGIN IMMEDIATE",
  deferred: "BEGIN DEFERRED",
};

/**
 * One better-sqlite3 database handle behind the port. Statements are prepared
 * once and kept in a bounded cache (most recently used kept), because
 * preparing is the largest per-call cost of a small statement.
 */
export class NodeConnection implements DriverConnection {
  readonly #db: Database;
  readonly #cache = new Map<string, Statement>();
  readonly #cacheSize: number;
  #transaction: NodeTransaction | undefined;

  constructor(db: Database, cacheSize: number) {
    this.#db = db;
    this.#cacheSize = cacheSize;
  }

  execute(sql: string, params: readonly SqlValue[] = []): Promise<QueryResult> {
    return settled(() => this.run(sql, params));
  }

  /** Synchronous core of `execute`, shared with the transaction session. */
  run(sql: string, params: readonly SqlValue[]): QueryResult {
    const statement = this.#prepare(sql);
    try {
      // better-sqlite3 binds plain Uint8Array (views included) as blobs: no copy, no conversion.
      const args = params as unknown[];
      if (statement.reader) {
        const rows = statement.all(...args);
        for (const row of rows) fromDriverRow(row);
        return { rows: rows as QueryResult["rows"], changes: 0, lastInsertRowid: undefined };
      }
      const info = statement.run(...args);
      return {
        rows: [],
        changes: info.changes,
        lastInsertRowid:
          typeof info.lastInsertRowid === "bigint"
            ? normalizeInteger(info.lastInsertRowid)
            : info.lastInsertRowid,
      };
    } catch (error) {
      throw translate(error, "statement failed");
    }
  }

  get inTransaction(): boolean {
    return this.#db.open && this.#db.inTransaction;
  }

  async executeScript(sql: string): Promise<void> {
    this.script(sql);
  }

  script(sql: string): void {
    try {
      this.#db.exec(sql);
    } catch (error) {
      throw translate(error, "script failed");
    }
  }

  async begin(mode: BeginMode): Promise<DriverTransaction> {
    if (this.#transaction !== undefined) {
      throw new RunledgerError(
        "transaction_active",
        "a transaction is already open on this connection; commit or roll it back first",
      );
    }
    this.run(BEGIN_SQL[mode], []);
    const transaction = new NodeTransaction(this, () => {
      this.#transaction = undefined;
    });
    this.#transaction = transaction;
    return transaction;
  }

  configure(settings: ConnectionSettings): Promise<void> {
    return applySettings(this, settings);
  }

  async close(): Promise<void> {
    if (!this.#db.open) return;
    this.#cache.clear();
    try {
      this.#db.close();
    } catch (error) {
      throw translate(error, "close failed");
    }
  }

  #prepare(sql: string): Statement {
    const cached = this.#cache.get(sql);
    if (cached !== undefined) {
      // Keep recently used statements at the young end, but only once the
      // cache is nearly full: reordering on every hit costs more than it saves.
      if (this.#cache.size >= this.#cacheSize - 1) {
        this.#cache.delete(sql);
        this.#cache.set(sql, cached);
      }
      return cached;
    }
    let statement: Statement;
    try {
      statement = this.#db.prepare(sql);
    } catch (error) {
      throw translate(error, "statement failed");
    }
    if (this.#cache.size >= this.#cacheSize) {
      const oldest = this.#cache.keys().next().value;
      if (oldest !== undefined) this.#cache.delete(oldest);
    }
    this.#cache.set(sql, statement);
    return statement;
  }
}

class NodeTransaction implements DriverTransaction {
  readonly #connection: NodeConnection;
  readonly #settle: () => void;
  #open = true;

  constructor(connection: NodeConnection, settle: () => void) {
    this.#connection = connection;
    this.#settle = settle;
  }

  /** SQLite's own answer (sqlite3_get_autocommit): false once it rolled the transaction back itself. */
  get active(): boolean {
    return this.#open && this.#connection.inTransaction;
  }

  execute(sql: string, params: readonly SqlValue[] = []): Promise<QueryResult> {
    return settled(() => {
      this.#checkOpen();
      return this.#connection.run(sql, params);
    });
  }

  async executeScript(sql: string): Promise<void> {
    this.#checkOpen();
    this.#connection.script(sql);
  }

  async commit(): Promise<void> {
    this.#checkOpen();
    // A failed COMMIT (e.g. SQLITE_BUSY) leaves the transaction open: the owner rolls back.
    this.#connection.run("COMMIT", []);
    this.#finish();
  }

  async rollback(): Promise<void> {
    this.#checkOpen();
    try {
      // SQLite rolls back by itself after some failures (SQLITE_FULL, IOERR, …).
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

/**
 * A synchronous call's outcome as a settled promise: what an `async` method
 * would return, without the second promise and the await an async function
 * adds to every statement.
 */
function settled<T>(call: () => T): Promise<T> {
  try {
    return Promise.resolve(call());
  } catch (error) {
    return Promise.reject(error);
  }
}
