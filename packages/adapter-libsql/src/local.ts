/**
 * A local file through libSQL's embedded engine, called directly: the
 * `libsql` package, which @libsql/client itself runs local files on. The
 * client prepares a new native statement for every call (and switches it to
 * raw mode, throwing and catching an error for every statement that returns
 * no rows); the journal's insert alone cost ~110 µs a step to prepare again
 * and again. Here statements are prepared once and kept (`StatementCache`),
 * and each call runs synchronously, as adapter-node's do: a lock is waited
 * for by SQLite's busy handler, up to the busy timeout.
 *
 * Facts about the engine this class absorbs:
 * - A statement that fails SQLITE_BUSY (or SQLITE_LOCKED) is left active,
 *   not reset, until it runs again or is garbage-collected. While it is,
 *   SQLite counts a statement in progress on the connection: a later COMMIT
 *   fails ("SQL statements in progress"). So such a statement is dropped from
 *   the cache and the handle is replaced (`#renew`) before the next call that
 *   is not inside a transaction — a transaction cannot be open then anyway:
 *   a write transaction holds the lock, and a read one that failed is rolled
 *   back by core. BEGIN, COMMIT and ROLLBACK go through `exec`, which leaves
 *   no statement behind, busy or not.
 * - A closed handle is freed only once every statement it prepared is
 *   garbage-collected (a Node-API finalizer, run when the event loop turns:
 *   finalizers.ts). So `close` folds the WAL into the database first, as the
 *   client path does, and each statement prepared, each blob bound and each
 *   close is counted toward the turns a promise-only caller would never let
 *   happen: a call after which a turn is due settles after it.
 * - A statement given one object as its only parameter reads it as named
 *   parameters: the parameters always go in as one array.
 * - `run` reports lastInsertRowid as a double: beyond 2^53 it is read again
 *   exactly with `last_insert_rowid()`.
 * - A blob is read as an ArrayBuffer: core's `normalizeRow` makes it a
 *   Uint8Array, in place.
 */
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
  RunledgerError,
  StatementCache,
  SynchronousTransactions,
} from "@runledger/core/port";
import Libsql from "libsql";
import { translate } from "./errors.js";
import { finalizerTurns } from "./finalizers.js";
import { toDriverParams } from "./values.js";

/** What this module uses of the engine's statement. */
interface Statement {
  readonly reader: boolean;
  run(params: unknown[]): { changes: number; lastInsertRowid: number | bigint };
  all(params: unknown[]): Record<string, unknown>[];
}

/**
 * A statement as the cache keeps it: whether it reads is asked once, when it
 * is prepared — libSQL's `reader` asks the engine on every read of it.
 */
interface Prepared {
  readonly statement: Statement;
  readonly reader: boolean;
}

/** What this module uses of the engine's database handle. */
export interface LocalHandle {
  readonly inTransaction: boolean;
  prepare(sql: string): Statement;
  exec(sql: string): void;
  defaultSafeIntegers(toggle: boolean): void;
  close(): void;
}

/** How a handle is opened: the path (or a `file:` URI for a read-only open) and the engine's options. */
export interface LocalOpen {
  readonly path: string;
  readonly busyTimeoutMs: number;
  readonly readOnly: boolean;
  readonly encryptionKey?: string;
}

/** Statements kept per connection: every statement core sends on a step, and room to spare. */
const CACHE_SIZE = 256;

/** Sent with `exec`: no statement object is left behind, whatever they answer. */
const CONTROL = /^(BEGIN|COMMIT|ROLLBACK|SAVEPOINT|RELEASE)\b/;

const MAX_SAFE = Number.MAX_SAFE_INTEGER;

/** Opens a handle as every local connection of this adapter has it (`setUp` applies the rest). */
export function openHandle(open: LocalOpen): LocalHandle {
  const Database = Libsql as unknown as new (
    path: string,
    options: { timeout: number; encryptionKey?: string },
  ) => LocalHandle;
  const db = new Database(open.path, {
    timeout: open.busyTimeoutMs,
    ...(open.encryptionKey === undefined ? {} : { encryptionKey: open.encryptionKey }),
  });
  db.defaultSafeIntegers(true);
  return db;
}

export class LocalConnection implements DriverConnection, SynchronousSession {
  readonly #open: LocalOpen;
  readonly #transactions = new SynchronousTransactions(this);
  /** SQLite's busy handler waits for a lock: BEGIN and a transaction's statements may run now. */
  readonly runsNow = true;
  /**
   * COMMIT runs now while no event-loop turn is due (finalizers.ts), read as
   * each transaction begins: a turn that falls due during a transaction is
   * taken by the next call that settles — at the latest the next
   * transaction's COMMIT, which then goes through `settle`.
   */
  get commitsNow(): boolean {
    return this.#turn === undefined;
  }
  #db: LocalHandle;
  #cache: StatementCache<Prepared>;
  #synchronous: ConnectionSettings["synchronous"];
  /** A statement failed busy and is still active on this handle: replace it before the next call. */
  #renewDue = false;
  /** The event loop's turn the last call made due (finalizers.ts), for `settle` to wait for. */
  #turn: Promise<void> | undefined;
  #closed = false;

  constructor(db: LocalHandle, open: LocalOpen) {
    this.#db = db;
    this.#open = open;
    this.#cache = this.#newCache(db);
  }

  /**
   * What every local connection must have: foreign keys on, writes refused on
   * a read-only one, the durability asked for. With an encryptionKey, the
   * schema is read: only that decrypts a page, so a wrong key fails here.
   */
  setUp(): void {
    const pragmas = ["PRAGMA foreign_keys = ON"];
    if (this.#open.readOnly) pragmas.push("PRAGMA query_only = ON");
    if (this.#synchronous !== undefined) pragmas.push(`PRAGMA synchronous = ${this.#synchronous}`);
    try {
      this.#db.exec(pragmas.join(";\n"));
      if (this.#open.encryptionKey !== undefined) {
        this.#db.prepare("SELECT 1 FROM sqlite_schema LIMIT 1").all([]);
      }
    } catch (error) {
      throw translate(error, "cannot set up the connection");
    }
  }

  execute(sql: string, params: readonly SqlValue[] = []): Promise<QueryResult> {
    return this.settle(() => this.run(sql, params));
  }

  /** One statement, now: the synchronous core of `execute`, shared with the transaction session. */
  run(sql: string, params: readonly SqlValue[]): QueryResult {
    this.#ready();
    if (params.length === 0 && CONTROL.test(sql)) {
      this.script(sql);
      return { rows: [], changes: 0, lastInsertRowid: undefined };
    }
    const { statement, reader } = this.#cache.get(sql);
    if (params.length > 0) this.#due(finalizerTurns.afterBinding(params));
    try {
      const args = toDriverParams(params);
      if (reader) {
        const rows = statement.all(args);
        for (const row of rows) normalizeRow(row);
        return { rows: rows as QueryResult["rows"], changes: 0, lastInsertRowid: undefined };
      }
      const info = statement.run(args);
      return {
        rows: [],
        changes: info.changes,
        lastInsertRowid: this.#rowid(info.lastInsertRowid),
      };
    } catch (error) {
      throw this.#failure(error, sql, "statement failed");
    }
  }

  get inTransaction(): boolean {
    return !this.#closed && this.#db.inTransaction;
  }

  async executeScript(sql: string): Promise<void> {
    this.script(sql);
  }

  script(sql: string): void {
    this.#ready();
    try {
      this.#db.exec(sql);
    } catch (error) {
      throw translate(error, "script failed");
    }
  }

  /**
   * A call runs at once (a lock is waited for by SQLite's busy handler, up to
   * the busy timeout) and settles then, or after the event loop's turn it
   * made due.
   */
  settle<T>(call: () => T): Promise<T> {
    let value: T;
    try {
      value = call();
    } catch (error) {
      const turn = this.#takeTurn();
      return turn === undefined ? Promise.reject(error) : turn.then(() => Promise.reject(error));
    }
    const turn = this.#takeTurn();
    return turn === undefined ? Promise.resolve(value) : turn.then(() => value);
  }

  #due(turn: Promise<void> | undefined): void {
    if (turn !== undefined) this.#turn = turn;
  }

  #takeTurn(): Promise<void> | undefined {
    const turn = this.#turn;
    this.#turn = undefined;
    return turn;
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

  async configure(settings: ConnectionSettings): Promise<void> {
    await applySettings(this, settings);
    if (settings.synchronous !== undefined) this.#synchronous = settings.synchronous;
  }

  async close(): Promise<void> {
    if (this.#closed) return;
    this.#closed = true;
    // The handle really closes only once its statements are collected (see
    // the header): the WAL is folded in now, so that after close the
    // database file alone holds every committed transaction.
    if (!this.#open.readOnly) {
      try {
        if (this.#db.inTransaction) this.#db.exec("ROLLBACK");
        this.#db.exec("PRAGMA wal_checkpoint(TRUNCATE)");
      } catch {
        // A reader of another process keeps the WAL: it folds it in itself when it closes.
      }
    }
    this.#cache.clear();
    try {
      this.#db.close();
    } catch (error) {
      throw translate(error, "close failed");
    }
    const turn = finalizerTurns.afterClose();
    if (turn !== undefined) await turn;
  }

  #newCache(db: LocalHandle): StatementCache<Prepared> {
    return new StatementCache(CACHE_SIZE, (sql) => {
      let prepared: Prepared;
      try {
        const statement = db.prepare(sql);
        prepared = { statement, reader: statement.reader };
      } catch (error) {
        throw translate(error, "statement failed");
      }
      this.#due(finalizerTurns.afterStatement());
      return prepared;
    });
  }

  /** The engine's double as the port's rowid, read again exactly where a double cannot hold it. */
  #rowid(reported: number | bigint): number | bigint {
    if (typeof reported === "bigint") return normalizeInteger(reported);
    if (reported <= MAX_SAFE && reported >= -MAX_SAFE) return reported;
    const row = this.#cache.get("SELECT last_insert_rowid() AS id").statement.all([])[0];
    return normalizeInteger(row?.id as bigint);
  }

  /** A statement's failure as the port's error; a busy one leaves the statement active (see the header). */
  #failure(error: unknown, sql: string, doing: string): RunledgerError {
    const translated = translate(error, doing);
    const primary = translated.sqlitePrimaryCode;
    if (primary === "SQLITE_BUSY" || primary === "SQLITE_LOCKED") {
      this.#cache.delete(sql);
      this.#renewDue = true;
    }
    return translated;
  }

  /**
   * Replaces the handle a busy failure left a statement active on, with the
   * same settings. If the new one cannot be opened or set up, this
   * connection closes: later calls fail with connection_closed rather than
   * run without foreign keys or read-only protection.
   */
  #renew(): void {
    this.#renewDue = false;
    const old = this.#db;
    this.#cache.clear();
    try {
      old.close();
    } catch {
      // the old handle goes with its statements, whenever they are collected
    }
    try {
      this.#db = openHandle(this.#open);
      this.#cache = this.#newCache(this.#db);
      this.setUp();
    } catch (error) {
      this.#closed = true;
      throw new RunledgerError(
        "connection_closed",
        "the connection was closed: replacing its handle after a busy failure failed; open the run again",
        { cause: error },
      );
    }
  }

  /** Refuses a call on a closed connection; replaces the handle first when a busy failure left it unusable. */
  #ready(): void {
    if (this.#closed) {
      throw new RunledgerError(
        "connection_closed",
        "this connection is closed; open the run again to go on",
      );
    }
    if (this.#renewDue && !this.#db.inTransaction) this.#renew();
  }
}
