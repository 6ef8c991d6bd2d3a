import type {
  BeginMode,
  ConnectionSettings,
  DriverConnection,
  DriverTransaction,
  QueryResult,
  SqlValue,
  SynchronousSession,
} from "@runledger/core/port";
import {
  applySettings,
  normalizeInteger,
  normalizeRow,
  StatementCache,
  SynchronousTransactions,
  settled,
} from "@runledger/core/port";
import type BetterSqlite3 from "better-sqlite3";
import { translate } from "./errors.js";

type Database = BetterSqlite3.Database;
type Statement = BetterSqlite3.Statement<unknown[], Record<string, unknown>>;

/**
 * One better-sqlite3 database handle behind the port. Statements are prepared
 * once and kept in a bounded cache (most recently used kept), because
 * preparing is the largest per-call cost of a small statement.
 */
export class NodeConnection implements DriverConnection, SynchronousSession {
  readonly #db: Database;
  readonly #cache: StatementCache<Statement>;
  readonly #transactions = new SynchronousTransactions(this);
  /** SQLite's busy handler waits for a lock, and nothing is owed between calls: every call may run now. */
  readonly runsNow = true;
  readonly commitsNow = true;

  constructor(db: Database, cacheSize: number) {
    this.#db = db;
    this.#cache = new StatementCache(cacheSize, (sql) => {
      try {
        return db.prepare(sql);
      } catch (error) {
        throw translate(error, "statement failed");
      }
    });
  }

  execute(sql: string, params: readonly SqlValue[] = []): Promise<QueryResult> {
    return settled(() => this.run(sql, params));
  }

  /** Synchronous core of `execute`, shared with the transaction session. */
  run(sql: string, params: readonly SqlValue[]): QueryResult {
    const statement = this.#cache.get(sql);
    try {
      // better-sqlite3 binds plain Uint8Array (views included) as blobs: no copy, no conversion.
      const args = params as unknown[];
      if (statement.reader) {
        const rows = statement.all(...args);
        for (const row of rows) normalizeRow(row);
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

  /** A call settles at once: a lock is waited for by SQLite's busy handler, up to the busy timeout. */
  settle<T>(call: () => T): Promise<T> {
    return settled(call);
  }

  /**
   * `begin`, run now. A method, not a function kept on each connection: the
   * call site in core then sees one function for every connection, and its
   * optimized code is not thrown away when a process opens its next run.
   */
  beginNow(mode: BeginMode): DriverTransaction {
    return this.#transactions.beginNow(mode);
  }

  begin(mode: BeginMode): Promise<DriverTransaction> {
    return this.#transactions.begin(mode);
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
}
