import type { Client, ResultSet, Transaction } from "@libsql/client";
import type {
  BeginMode,
  ConnectionSettings,
  DriverConnection,
  DriverTransaction,
  QueryResult,
  RunledgerError,
  SqlValue,
} from "@runledger/core/port";
import {
  applySettings,
  normalizeInteger,
  transactionActiveError,
  transactionClosedError,
} from "@runledger/core/port";
import { translate } from "./errors.js";
import { finalizerTurns } from "./finalizers.js";
import { RemoteRetry, readOnlyRefusal, readOnlyRemote } from "./remote.js";
import { beginRemote } from "./remote-transaction.js";
import { ReplicaRead } from "./replica-read.js";
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
 * - A local statement that fails with SQLITE_BUSY is left active (not reset)
 *   until it is garbage-collected. While it is, SQLite counts a write in
 *   progress on that connection: every later COMMIT fails ("SQL statements in
 *   progress") and autocommit writes stay uncommitted, then roll back. So after
 *   a busy failure the connection is replaced (`renew`) and its settings
 *   applied again before anything else runs on it.
 * - Each call prepares a native statement, and a closed client leaves its
 *   native connection, freed only when the event loop turns (see
 *   finalizers.ts): the adapter lets it turn now and then, counting across
 *   all its connections.
 * - A local write reports lastInsertRowid through a double: beyond 2^53 it is
 *   read again exactly with `last_insert_rowid()`.
 * - A remote server (see remote.ts) refuses every PRAGMA with a value: the
 *   connection says it is `remote`, sets nothing, and retries what the server
 *   answered busy itself (a remote client has no busy handler).
 */
export class LibsqlConnection implements DriverConnection {
  readonly remote: boolean;
  readonly #client: Client;
  readonly #remote: boolean;
  readonly #readOnly: boolean;
  readonly #busyTimeoutMs: number;
  /** The caller's whole busy deadline: a remote transaction's first request is retried until then. */
  readonly #busyDeadlineMs: number;
  /** Opened with an encryptionKey: setUp reads the schema, so a wrong key fails the open itself. */
  readonly #encrypted: boolean;
  /**
   * An embedded replica (a local file that follows a server's database):
   * synced as it opens; "local" when its read snapshots are served from the
   * file (no background sync), "server" when they are transactions there.
   */
  readonly #replica: "local" | "server" | undefined;
  #synchronous: ConnectionSettings["synchronous"];
  /** The client's transaction most recently begun, ended on close if still open. */
  #lastTransaction: Transaction | undefined;
  #closed = false;

  constructor(
    client: Client,
    options: {
      remote: boolean;
      readOnly: boolean;
      busyTimeoutMs: number;
      busyDeadlineMs: number;
      encrypted?: boolean;
      replica?: "local" | "server";
    },
  ) {
    this.#client = client;
    this.remote = options.remote;
    this.#remote = options.remote;
    this.#readOnly = options.readOnly;
    this.#busyTimeoutMs = options.busyTimeoutMs;
    this.#busyDeadlineMs = options.busyDeadlineMs;
    this.#encrypted = options.encrypted === true;
    this.#replica = options.replica;
  }

  /** Applies what every connection of this adapter must have; the driver calls it once after opening. */
  async setUp(): Promise<void> {
    if (this.#replica !== undefined) {
      // Its writes go to the primary, which enforces foreign keys itself, and
      // the replica takes no PRAGMA with a value. Synced first, so the open
      // reads what the primary holds now.
      try {
        await this.#client.sync();
      } catch (error) {
        throw translate(error, "cannot sync the replica with its primary", true);
      }
      return;
    }
    if (this.#remote) {
      // The first request reaches the server: an unreachable server, a refused
      // token or a missing namespace fails the open, not a later statement.
      // A read-only connection writes nothing, so foreign keys do not matter
      // to it, and a read-only token is refused every PRAGMA: it asks only
      // `SELECT 1`. sqld always enforces foreign keys; a server that does not
      // is told to.
      if (this.#readOnly) {
        await this.execute("SELECT 1");
        return;
      }
      const { rows } = await this.execute("PRAGMA foreign_keys");
      if (Number(rows[0]?.foreign_keys) !== 1) await this.execute("PRAGMA foreign_keys = ON");
      return;
    }
    const pragmas = ["PRAGMA foreign_keys = ON"];
    if (this.#readOnly) pragmas.push("PRAGMA query_only = ON");
    if (this.#synchronous !== undefined) pragmas.push(`PRAGMA synchronous = ${this.#synchronous}`);
    // A PRAGMA reads no page: only a read of the schema decrypts the first one.
    if (this.#encrypted) pragmas.push("SELECT 1 FROM sqlite_schema LIMIT 1");
    try {
      // One script: the client runs it without preparing a statement object
      // per PRAGMA (each would cost as much as a query, and a finalizer).
      await this.#client.executeMultiple(pragmas.join(";\n"));
    } catch (error) {
      throw translate(error, "cannot set up the connection");
    }
  }

  execute(sql: string, params: readonly SqlValue[] = []): Promise<QueryResult> {
    if (this.#remote) return this.#executeRemote(sql, params);
    return runStatement(
      () => this.#client.execute({ sql, args: toDriverParams(params) }),
      params,
      (error) => this.#failure(error, "statement failed"),
      this,
    );
  }

  /**
   * One autocommit statement on the server, tried again while the server
   * answers busy (nothing of a busy statement happened). On a read-only
   * connection it runs in a transaction that is always rolled back, and a
   * statement that changed rows fails `read_only`: the server has no
   * `query_only` to set.
   */
  async #executeRemote(sql: string, params: readonly SqlValue[]): Promise<QueryResult> {
    const retry = new RemoteRetry(this.#busyTimeoutMs);
    for (;;) {
      try {
        if (this.#readOnly) return await readOnlyRemote(this.#client, sql, params);
        return await runStatement(
          () => this.#client.execute({ sql, args: toDriverParams(params) }),
          params,
          (error) => translate(error, "statement failed", true),
          undefined,
        );
      } catch (error) {
        await retry.afterFailure(error);
      }
    }
  }

  async executeScript(sql: string): Promise<void> {
    if (this.#remote && this.#readOnly) throw readOnlyRefusal("run a script");
    await this.#attempt("script failed", () => this.#client.executeMultiple(sql));
  }

  async begin(mode: BeginMode): Promise<DriverTransaction> {
    if (this.#remote) {
      if (this.#readOnly && mode === "immediate") {
        throw readOnlyRefusal("begin a write transaction");
      }
      if (mode === "deferred" && this.#replica === "local") return new ReplicaRead(this.#client);
      // A remote client would open a second stream; the port allows one transaction at a time.
      if (this.#lastTransaction !== undefined && !this.#lastTransaction.closed) {
        throw transactionActiveError();
      }
      return beginRemote({
        // A read snapshot is a read transaction: a replica (a server, or an
        // embedded replica's file) serves it itself instead of forwarding it.
        open: () => this.#client.transaction(mode === "immediate" ? "write" : "read"),
        readOnly: this.#readOnly,
        // BEGIN goes with the first statement, after core's retry of begin:
        // a busy answer to it is waited out here, for the caller's whole deadline.
        busyDeadlineMs: this.#busyDeadlineMs,
        opened: (transaction) => {
          this.#lastTransaction = transaction;
        },
      });
    }
    // Awaited here, not through #attempt: begin and commit run once per
    // transaction, and each async wrapper costs promises on the hot path.
    let transaction: Transaction;
    try {
      transaction = await this.#client.transaction(mode === "immediate" ? "write" : "deferred");
    } catch (error) {
      throw await this.#failure(error, "begin failed");
    }
    this.#lastTransaction = transaction;
    return new LibsqlTransaction(transaction, this.#remote, () => this.renew());
  }

  async configure(settings: ConnectionSettings): Promise<void> {
    // A remote server owns its journal and durability settings.
    if (this.#remote) return;
    await applySettings(this, settings);
    if (settings.synchronous !== undefined) this.#synchronous = settings.synchronous;
  }

  async close(): Promise<void> {
    if (this.#closed) return;
    this.#closed = true;
    // libSQL frees a closed handle only once its statements are garbage-
    // collected; until then a transaction left open (its rollback failed)
    // would keep its locks on the file. Roll it back first; a no-op otherwise.
    try {
      this.#lastTransaction?.close();
    } catch {
      // the client closes the connection regardless
    }
    // The native connection really closes only once every statement it ever
    // prepared is garbage-collected (see the class comment): only then would
    // SQLite fold the WAL into the database file and remove -wal and -shm,
    // maybe never before the process exits. So the fold happens here, before
    // close resolves: after it the database file alone holds every committed
    // transaction, and the -wal is empty. (The -shm and the empty -wal stay
    // until the native close, which this adapter cannot hasten.)
    if (!this.#remote && !this.#readOnly) {
      try {
        await this.#client.execute("PRAGMA wal_checkpoint(TRUNCATE)");
      } catch {
        // A reader of another process keeps the WAL: it folds it in itself when it closes.
      }
    }
    this.#client.close();
    const turn = finalizerTurns.afterClose();
    if (turn !== undefined) await turn;
  }

  /**
   * Replaces the pooled connection after a busy failure left a statement
   * active on it (see the class comment). Only called while no transaction
   * holds the connection. If the fresh connection cannot be set up, this
   * connection closes: later calls fail with connection_closed rather than
   * run without foreign keys or read-only protection.
   */
  async renew(): Promise<void> {
    if (this.#remote || this.#closed) return;
    try {
      await this.#client.reconnect();
      await this.setUp();
    } catch {
      await this.close();
    }
  }

  async #attempt<T>(doing: string, action: () => Promise<T>): Promise<T> {
    try {
      return await action();
    } catch (error) {
      throw await this.#failure(error, doing);
    }
  }

  /** A client failure as the port's error; after a busy one, the connection is renewed first. */
  async #failure(error: unknown, doing: string): Promise<RunledgerError> {
    const translated = translate(error, doing, this.#remote);
    if (leavesStatementActive(translated)) await this.renew();
    return translated;
  }
}

class LibsqlTransaction implements DriverTransaction {
  readonly #transaction: Transaction;
  readonly #remote: boolean;
  readonly #renew: () => Promise<void>;
  /** Set by our own commit or rollback; SQLite ending the transaction by itself does not set it. */
  #finished = false;
  /** A statement failed busy inside: renew the connection once the transaction lets go of it. */
  #renewAfter = false;

  constructor(transaction: Transaction, remote: boolean, renew: () => Promise<void>) {
    this.#transaction = transaction;
    this.#remote = remote;
    this.#renew = renew;
  }

  /** The client's `closed` reads SQLite's own answer: true once SQLite rolled the transaction back itself. */
  get active(): boolean {
    return !this.#finished && !this.#transaction.closed;
  }

  execute(sql: string, params: readonly SqlValue[] = []): Promise<QueryResult> {
    try {
      this.#checkOpen();
    } catch (error) {
      return Promise.reject(error);
    }
    return runStatement(
      () => this.#transaction.execute({ sql, args: toDriverParams(params) }),
      params,
      (error) => this.#failure(error, "statement failed"),
      this.#remote ? undefined : this,
    );
  }

  async executeScript(sql: string): Promise<void> {
    this.#checkOpen();
    await this.#attempt("script failed", () => this.#transaction.executeMultiple(sql));
  }

  async commit(): Promise<void> {
    this.#checkOpen();
    try {
      await withoutStackCapture(() => this.#transaction.commit());
      this.#finished = true;
    } catch (error) {
      throw this.#failure(error, "commit failed");
    } finally {
      // The client gives the connection back on commit, failed or not.
      if (this.#renewAfter) await this.#settled();
    }
  }

  async rollback(): Promise<void> {
    this.#checkOpen();
    this.#finished = true;
    try {
      // SQLite rolls back by itself after some failures; the client then reports closed.
      if (this.#transaction.closed) {
        this.#transaction.close();
        return;
      }
      await this.#attempt("rollback failed", () => this.#transaction.rollback());
    } finally {
      await this.#settled();
    }
  }

  async #settled(): Promise<void> {
    if (!this.#renewAfter) return;
    this.#renewAfter = false;
    await this.#renew();
  }

  async #attempt<T>(doing: string, action: () => Promise<T>): Promise<T> {
    try {
      return await action();
    } catch (error) {
      throw this.#failure(error, doing);
    }
  }

  /** A client failure as the port's error; after a busy one, the connection is renewed once released. */
  #failure(error: unknown, doing: string): RunledgerError {
    const translated = translate(error, doing);
    if (leavesStatementActive(translated)) this.#renewAfter = true;
    return translated;
  }

  #checkOpen(): void {
    if (this.#finished) throw transactionClosedError();
  }
}

/** Failures after which the local client leaves the failed statement active. */
function leavesStatementActive(error: RunledgerError): boolean {
  return error.sqlitePrimaryCode === "SQLITE_BUSY" || error.sqlitePrimaryCode === "SQLITE_LOCKED";
}

const MAX_SAFE = BigInt(Number.MAX_SAFE_INTEGER);

type ExactRowid = { execute(sql: string): Promise<QueryResult> } | undefined;

/**
 * One statement through the client: a failure as `failure` translates it,
 * the statement counted for the finalizer turns, the port's result. One
 * promise per statement unless a turn is due.
 */
async function runStatement(
  execute: () => Promise<ResultSet>,
  params: readonly SqlValue[],
  failure: (error: unknown) => RunledgerError | Promise<RunledgerError>,
  exact: ExactRowid,
): Promise<QueryResult> {
  let result: ResultSet;
  try {
    result = await withoutStackCapture(execute);
  } catch (error) {
    throw await failure(error);
  }
  const turn = finalizerTurns.afterStatement(params);
  if (turn !== undefined) await turn;
  return toQueryResult(result, exact);
}

/**
 * The port's result. `exact` is where a local write's rowid can be read again
 * when the client's double could not carry it (beyond ±2^53); only then is
 * the result a promise.
 */
function toQueryResult(result: ResultSet, exact: ExactRowid): QueryResult | Promise<QueryResult> {
  const lastInsertRowid =
    result.lastInsertRowid === undefined ? undefined : normalizeInteger(result.lastInsertRowid);
  const rows = fromResultSet(result);
  if (
    exact !== undefined &&
    typeof lastInsertRowid === "bigint" &&
    (lastInsertRowid > MAX_SAFE || lastInsertRowid < -MAX_SAFE)
  ) {
    return exact.execute("SELECT last_insert_rowid() AS id").then(({ rows: read }) => ({
      rows,
      changes: result.rowsAffected,
      lastInsertRowid: read[0]?.id as number | bigint,
    }));
  }
  return { rows, changes: result.rowsAffected, lastInsertRowid };
}

/**
 * Runs a client call with V8's stack capture off for its synchronous part.
 * @libsql/client tells a statement that returns rows from one that does not
 * by switching the native statement to raw mode and catching the error that
 * throws for the latter: one Error for every BEGIN, INSERT, UPDATE, DELETE
 * and COMMIT, each of which V8 gives a stack trace, walking the caller's
 * await chain — core's, deeper than a plain loop's. Inside a transaction a
 * local statement, and the commit, run synchronously inside the call (only
 * the promise settles later), so that is where the capture is off; outside
 * one the client first waits for a pooled connection and the capture is
 * back on by the time the statement runs (there it changes nothing, and
 * costs nothing). A real failure loses nothing it needs: it
 * reaches the caller as a RunledgerError made (with its stack) where the
 * call is awaited, the client's error as its cause.
 */
function withoutStackCapture<T>(call: () => T): T {
  const limit = Error.stackTraceLimit;
  Error.stackTraceLimit = 0;
  try {
    return call();
  } finally {
    Error.stackTraceLimit = limit;
  }
}
