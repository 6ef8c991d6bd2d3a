/**
 * The transactions of a synchronous driver (better-sqlite3,
 * node-sqlite3-wasm), written once for every such adapter: BEGIN, COMMIT and
 * ROLLBACK on the connection's one handle, one transaction at a time,
 * `active` read from SQLite's own autocommit state, and every call after the
 * end refused. What such drivers do differently — how a synchronous call
 * becomes the port's promise: at once, or retried on timers while SQLite
 * answers busy — the connection says through `settle`.
 */
import type { BeginMode, DriverTransaction, QueryResult } from "./driver.js";
import { transactionActiveError, transactionClosedError } from "./transaction-refusals.js";
import type { SqlValue } from "./values.js";

/** What a synchronous driver's connection lends the transactions it begins. */
export interface SynchronousSession {
  /** Runs one statement now; a failure is thrown as the port's error already. */
  run(sql: string, params: readonly SqlValue[]): QueryResult;
  /** Runs a script now; a failure is thrown as the port's error already. */
  script(sql: string): void;
  /**
   * SQLite's own answer (sqlite3_get_autocommit: better-sqlite3's and
   * node-sqlite3-wasm's `db.inTransaction`): false once SQLite has ended the
   * transaction by itself.
   */
  readonly inTransaction: boolean;
  /**
   * A synchronous call as the port's promise: `settled(call)` where SQLite's
   * busy handler waits for a lock (adapter-node), or a retry on timers while
   * the call fails `busy` where that handler is off because its wait would
   * sleep the thread (adapter-wasm).
   */
  settle<T>(call: () => T): Promise<T>;
  /**
   * True where BEGIN and the statements of a transaction may run without
   * `settle`: SQLite's busy handler waits for a lock (adapter-node,
   * adapter-libsql's local files). The connection then offers `beginNow`,
   * and its transactions `executeNow`. False where `settle` retries busy on
   * timers (adapter-wasm).
   */
  readonly runsNow: boolean;
  /**
   * True where COMMIT may run without `settle` too: its transactions then
   * offer `commitNow`. Read as each transaction begins, so it may change
   * between transactions: always true where nothing is owed between calls
   * (adapter-node); on adapter-libsql's local files, true while no event-loop
   * turn is due (for libSQL's finalizers) — a turn that falls due during a
   * transaction committed now is taken by the next call that settles, at the
   * latest the next transaction's COMMIT. False where `settle` does more
   * than run the call.
   */
  readonly commitsNow: boolean;
}

const BEGIN_SQL: Record<BeginMode, string> = {
  immediate: "BEGIN IMMEDIATE",
  deferred: "BEGIN DEFERRED",
};

/** The transactions of one synchronous connection: its `begin` hands the call here. */
export class SynchronousTransactions {
  readonly #session: SynchronousSession;
  #open: DriverTransaction | undefined;

  constructor(session: SynchronousSession) {
    this.#session = session;
  }

  /** BEGIN through `settle`; `transaction_active` while the last one begun has not ended. */
  begin(mode: BeginMode): Promise<DriverTransaction> {
    if (this.#open !== undefined) return Promise.reject(transactionActiveError());
    return this.#session.settle(() => this.beginNow(mode));
  }

  /** `begin`, run now (the connection's `beginNow`, where its session `runsNow`); its failure thrown. */
  beginNow(mode: BeginMode): DriverTransaction {
    if (this.#open !== undefined) throw transactionActiveError();
    this.#session.run(BEGIN_SQL[mode], []);
    const transaction = new SynchronousTransaction(this.#session, () => {
      this.#open = undefined;
    });
    this.#open = transaction;
    return transaction;
  }
}

class SynchronousTransaction implements DriverTransaction {
  readonly #session: SynchronousSession;
  readonly #ended: () => void;
  #open = true;
  readonly executeNow: ((sql: string, params: readonly SqlValue[]) => QueryResult) | undefined;
  readonly commitNow: (() => void) | undefined;

  constructor(session: SynchronousSession, ended: () => void) {
    this.#session = session;
    this.#ended = ended;
    if (session.runsNow) this.executeNow = (sql, params) => this.#runNow(sql, params);
    if (session.runsNow && session.commitsNow) this.commitNow = () => this.#commitNow();
  }

  #runNow(sql: string, params: readonly SqlValue[]): QueryResult {
    this.#checkOpen();
    return this.#session.run(sql, params);
  }

  get active(): boolean {
    return this.#open && this.#session.inTransaction;
  }

  execute(sql: string, params: readonly SqlValue[] = []): Promise<QueryResult> {
    return this.#session.settle(() => this.#runNow(sql, params));
  }

  executeScript(sql: string): Promise<void> {
    return this.#session.settle(() => {
      this.#checkOpen();
      this.#session.script(sql);
    });
  }

  /** A failed COMMIT (SQLITE_BUSY, say) leaves the transaction open: its owner rolls back. */
  commit(): Promise<void> {
    return this.#session.settle(() => this.#commitNow());
  }

  #commitNow(): void {
    this.#checkOpen();
    this.#session.run("COMMIT", []);
    this.#finish();
  }

  /**
   * Run at once, never retried: SQLite rolls back by itself after some
   * failures (SQLITE_FULL, IOERR, …), and then there is nothing left to undo.
   */
  async rollback(): Promise<void> {
    this.#checkOpen();
    try {
      if (this.#session.inTransaction) this.#session.run("ROLLBACK", []);
    } finally {
      this.#finish();
    }
  }

  #finish(): void {
    this.#open = false;
    this.#ended();
  }

  #checkOpen(): void {
    if (!this.#open) throw transactionClosedError();
  }
}

/**
 * A synchronous call's outcome as a settled promise: what an `async` method
 * would return, without the second promise and the await an async function
 * adds to every statement.
 */
export function settled<T>(call: () => T): Promise<T> {
  try {
    return Promise.resolve(call());
  } catch (error) {
    return Promise.reject(error);
  }
}
