import type { Client, Transaction } from "@libsql/client";
import type {
  BeginMode,
  ConnectionSettings,
  DriverConnection,
  DriverTransaction,
  QueryResult,
  SqlValue,
} from "@runledger/core/port";
import { normalizeInteger, RunledgerError } from "@runledger/core/port";
import { translate } from "./errors.js";
import { fromResultSet, toDriverParams } from "./values.js";

/**
 * One @libsql/client Client behind the port, limited to a single pooled
 * connection. Facts about the client this design absorbs:
 * - `execute("BEGIN …")` does not hold a connection: only `client.transaction()`
 *   does, so `begin` uses it.
 * - PRAGMAs reach one pooled connection. With one connection and core's
 *   per-entry queue, `foreign_keys` and `synchronous` set here stay set.
 * - Two write transactions on one client would block the event loop in
 *   SQLite's busy handler: core's queue serializes them before they get here.
 */
export class LibsqlConnection implements DriverConnection {
  readonly #client: Client;
  readonly #remote: boolean;
  #closed = false;

  constructor(client: Client, remote: boolean) {
    this.#client = client;
    this.#remote = remote;
  }

  async execute(sql: string, params: readonly SqlValue[] = []): Promise<QueryResult> {
    try {
      return toQueryResult(await this.#client.execute({ sql, args: toDriverParams(params) }));
    } catch (error) {
      throw translate(error, "statement failed");
    }
  }

  async executeScript(sql: string): Promise<void> {
    try {
      await this.#client.executeMultiple(sql);
    } catch (error) {
      throw translate(error, "script failed");
    }
  }

  async begin(mode: BeginMode): Promise<DriverTransaction> {
    try {
      return new LibsqlTransaction(
        await this.#client.transaction(mode === "immediate" ? "write" : "deferred"),
      );
    } catch (error) {
      throw translate(error, "begin failed");
    }
  }

  async configure(settings: ConnectionSettings): Promise<void> {
    // A remote server owns its journal and durability settings.
    if (this.#remote) return;
    if (settings.journalMode !== undefined) {
      const { rows } = await this.execute(`PRAGMA journal_mode = ${settings.journalMode}`);
      const mode = String(rows[0]?.journal_mode ?? "").toLowerCase();
      if (mode !== settings.journalMode) {
        throw new RunledgerError(
          "journal_mode_refused",
          `SQLite kept journal mode "${mode}" instead of "${settings.journalMode}"; ` +
            "the database may be read-only or in memory",
        );
      }
    }
    if (settings.synchronous !== undefined) {
      await this.execute(`PRAGMA synchronous = ${settings.synchronous}`);
    }
  }

  async close(): Promise<void> {
    if (this.#closed) return;
    this.#closed = true;
    this.#client.close();
  }
}

class LibsqlTransaction implements DriverTransaction {
  readonly #transaction: Transaction;

  constructor(transaction: Transaction) {
    this.#transaction = transaction;
  }

  async execute(sql: string, params: readonly SqlValue[] = []): Promise<QueryResult> {
    try {
      return toQueryResult(await this.#transaction.execute({ sql, args: toDriverParams(params) }));
    } catch (error) {
      throw translate(error, "statement failed");
    }
  }

  async executeScript(sql: string): Promise<void> {
    try {
      await this.#transaction.executeMultiple(sql);
    } catch (error) {
      throw translate(error, "script failed");
    }
  }

  async commit(): Promise<void> {
    try {
      await this.#transaction.commit();
    } catch (error) {
      throw translate(error, "commit failed");
    }
  }

  async rollback(): Promise<void> {
    // SQLite rolls back by itself after some failures; the client then reports closed.
    if (this.#transaction.closed) {
      this.#transaction.close();
      return;
    }
    try {
      await this.#transaction.rollback();
    } catch (error) {
      throw translate(error, "rollback failed");
    }
  }
}

function toQueryResult(result: import("@libsql/client").ResultSet): QueryResult {
  return {
    rows: fromResultSet(result),
    changes: result.rowsAffected,
    lastInsertRowid:
      result.lastInsertRowid === undefined ? undefined : normalizeInteger(result.lastInsertRowid),
  };
}
