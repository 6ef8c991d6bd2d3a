/**
 * Typed queries: a Kysely dialect over the port, so that code above it and
 * applications can write Kysely queries that run on every adapter, inside
 * core's transactions.
 */
import {
  CompiledQuery,
  type DatabaseConnection,
  type Dialect,
  type Kysely,
  type Driver as KyselyDriver,
  type QueryResult as KyselyQueryResult,
  SqliteAdapter,
  SqliteIntrospector,
  SqliteQueryCompiler,
} from "kysely";
import type { Executor } from "./driver.js";
import { RunledgerError } from "./errors.js";
import type { SqlValue } from "./values.js";

/**
 * A Kysely dialect over the port. Kysely's SQLite compiler, adapter and
 * introspector are runtime-agnostic, so typed queries run on every adapter.
 *
 * Transactions belong to core (lease.transact / tx.savepoint), never to
 * Kysely: `db.transaction()` through this dialect is refused. The executor is
 * whatever core hands in — a connection, or the transaction in progress.
 */
export class RunledgerDialect implements Dialect {
  readonly #executor: () => Executor;

  constructor(executor: Executor | (() => Executor)) {
    this.#executor = typeof executor === "function" ? executor : () => executor;
  }

  createAdapter() {
    return new SqliteAdapter();
  }
  createDriver(): KyselyDriver {
    return new PortKyselyDriver(this.#executor);
  }
  createQueryCompiler() {
    return new SqliteQueryCompiler();
  }
  // biome-ignore lint/suspicious/noExplicitAny: Kysely's own signature
  createIntrospector(db: Kysely<any>) {
    return new SqliteIntrospector(db);
  }
}

class PortKyselyDriver implements KyselyDriver {
  readonly #connection: PortKyselyConnection;

  constructor(executor: () => Executor) {
    this.#connection = new PortKyselyConnection(executor);
  }
  async init(): Promise<void> {}
  async acquireConnection(): Promise<DatabaseConnection> {
    return this.#connection;
  }
  async beginTransaction(): Promise<void> {
    throw refuseKyselyTransaction();
  }
  async commitTransaction(): Promise<void> {
    throw refuseKyselyTransaction();
  }
  async rollbackTransaction(): Promise<void> {
    throw refuseKyselyTransaction();
  }
  async releaseConnection(): Promise<void> {}
  async destroy(): Promise<void> {}
}

class PortKyselyConnection implements DatabaseConnection {
  readonly #executor: () => Executor;

  constructor(executor: () => Executor) {
    this.#executor = executor;
  }

  async executeQuery<R>(query: CompiledQuery): Promise<KyselyQueryResult<R>> {
    const result = await this.#executor().execute(
      query.sql,
      query.parameters as readonly SqlValue[],
    );
    const lastId = result.lastInsertRowid;
    return {
      rows: result.rows as R[],
      ...(result.changes > 0 || lastId !== undefined
        ? {
            numAffectedRows: BigInt(result.changes),
            ...(lastId === undefined ? {} : { insertId: BigInt(lastId) }),
          }
        : {}),
    };
  }

  async *streamQuery<R>(query: CompiledQuery): AsyncIterableIterator<KyselyQueryResult<R>> {
    const result = await this.executeQuery<R>(query);
    for (const row of result.rows) yield { rows: [row] };
  }
}

function refuseKyselyTransaction(): RunledgerError {
  return new RunledgerError(
    "kysely_transaction_refused",
    "Kysely transactions are not used with runledger: open the transaction with lease.transact(fn) " +
      "and nest with tx.savepoint(fn), then run Kysely queries inside it",
  );
}

export { CompiledQuery };
