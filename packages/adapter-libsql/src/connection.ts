import type { Client, ResultSet } from "@libsql/client";
import type {
  BeginMode,
  ConnectionSettings,
  DriverConnection,
  DriverTransaction,
  QueryResult,
  SqlValue,
} from "@runledger/core/port";
import { normalizeInteger, transactionActiveError } from "@runledger/core/port";
import { translate } from "./errors.js";
import { finalizerTurns } from "./finalizers.js";
import type { KeptStream } from "./kept-stream.js";
import type { StreamTransaction } from "./kept-transaction.js";
import { RemoteRetry, readOnlyRefusal, readOnlyRemote } from "./remote.js";
import { beginRemote, type RemoteTransaction } from "./remote-transaction.js";
import { ReplicaRead } from "./replica-read.js";
import { fromResultSet, toDriverParams } from "./values.js";

/**
 * One @libsql/client Client behind the port, for a database on a libSQL
 * server or an embedded replica of one (a local file is local.ts's). Facts
 * about the client this design absorbs:
 * - `execute("BEGIN …")` does not hold a connection: only a stream does.
 *   `begin` holds a write transaction on the connection's kept stream
 *   (kept-transaction.ts: a stream of its own per transaction, as
 *   `client.transaction()` opens, once hung sqld), and a read snapshot on
 *   `client.transaction("read")`; the port allows one transaction at a
 *   time.
 * - A server refuses every PRAGMA with a value: the connection says it is
 *   `remote`, sets nothing, and retries what the server answered busy itself
 *   (a remote client has no busy handler).
 * - An embedded replica prepares a fresh native statement for every local
 *   read, freed only when the event loop turns (see finalizers.ts): the
 *   adapter lets it turn now and then, counting across all its connections.
 */
export class LibsqlConnection implements DriverConnection {
  readonly remote = true;
  readonly #client: Client;
  readonly #readOnly: boolean;
  readonly #busyTimeoutMs: number;
  /** The caller's whole busy deadline: a remote transaction's first request is retried until then. */
  readonly #busyDeadlineMs: number;
  /**
   * An embedded replica (a local file that follows a server's database):
   * synced as it opens; "local" when its read snapshots are served from the
   * file (no background sync), "server" when they are transactions there.
   */
  readonly #replica: "local" | "server" | undefined;
  /** Where a transaction sent whole goes (kept-stream.ts, kept-http-stream.ts); else the client's batch. */
  readonly #kept: KeptStream | undefined;
  readonly #closeFetch: (() => void) | undefined;
  /** The transaction most recently begun on the server, ended on close if still open. */
  #lastTransaction: RemoteTransaction | undefined;
  #closed = false;

  constructor(
    client: Client,
    options: {
      readOnly: boolean;
      busyTimeoutMs: number;
      busyDeadlineMs: number;
      replica?: "local" | "server";
      kept?: KeptStream;
      /** Closes the sockets the client's fetch kept (node-fetch.ts), after the client. */
      closeFetch?: () => void;
    },
  ) {
    this.#client = client;
    this.#readOnly = options.readOnly;
    this.#busyTimeoutMs = options.busyTimeoutMs;
    this.#busyDeadlineMs = options.busyDeadlineMs;
    this.#replica = options.replica;
    this.#kept = options.kept;
    this.#closeFetch = options.closeFetch;
  }

  /**
   * Reaches the server (or syncs the replica) once, so that an unreachable
   * server, a refused token or a missing namespace fails the open, not a
   * later statement; the driver calls it once after opening.
   */
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
  }

  /**
   * One autocommit statement on the server, tried again while the server
   * answers busy (nothing of a busy statement happened). On a read-only
   * connection it runs in a transaction that is always rolled back, and a
   * statement that changed rows fails `read_only`: the server has no
   * `query_only` to set.
   */
  async execute(sql: string, params: readonly SqlValue[] = []): Promise<QueryResult> {
    const retry = new RemoteRetry(this.#busyTimeoutMs);
    for (;;) {
      try {
        if (this.#readOnly) return await readOnlyRemote(this.#client, sql, params);
        return await runStatement(
          () => this.#client.execute({ sql, args: toDriverParams(params) }),
          params,
        );
      } catch (error) {
        await retry.afterFailure(error);
      }
    }
  }

  async executeScript(sql: string): Promise<void> {
    if (this.#readOnly) throw readOnlyRefusal("run a script");
    try {
      await this.#client.executeMultiple(sql);
    } catch (error) {
      throw translate(error, "script failed", true);
    }
  }

  async begin(mode: BeginMode): Promise<DriverTransaction> {
    if (this.#readOnly && mode === "immediate") {
      throw readOnlyRefusal("begin a write transaction");
    }
    if (mode === "deferred" && this.#replica === "local") return new ReplicaRead(this.#client);
    // A remote client would open a second stream; the port allows one transaction at a time.
    if (this.#lastTransaction?.open === true) throw transactionActiveError();
    this.#lastTransaction = beginRemote({
      // A read snapshot is a read transaction: a replica (a server, or an
      // embedded replica's file) serves it itself instead of forwarding it.
      open: () =>
        mode === "immediate" ? this.#writeTransaction() : this.#client.transaction("read"),
      whole: (statements) =>
        this.#kept === undefined
          ? this.#client.batch(statements, "write")
          : this.#kept.writeBatch(statements),
      readOnly: this.#readOnly,
      // BEGIN goes with the first statement, after core's retry of begin:
      // a busy answer to it is waited out here, for the caller's whole deadline.
      busyDeadlineMs: this.#busyDeadlineMs,
    });
    return this.#lastTransaction;
  }

  /**
   * A write transaction on the kept stream where it can hold one
   * (kept-transaction.ts says why), else the client's own, on a stream of
   * its own.
   */
  async #writeTransaction(): Promise<StreamTransaction> {
    return (await this.#kept?.transaction?.()) ?? this.#client.transaction("write");
  }

  /** A server owns its journal and durability settings: nothing to set. */
  async configure(_settings: ConnectionSettings): Promise<void> {}

  async close(): Promise<void> {
    if (this.#closed) return;
    this.#closed = true;
    try {
      this.#lastTransaction?.close();
    } catch {
      // the client closes the connection regardless
    }
    this.#kept?.close();
    this.#client.close();
    this.#closeFetch?.();
    const turn = finalizerTurns.afterClose();
    if (turn !== undefined) await turn;
  }
}

/**
 * One statement through the client: a failure as the port's error, the
 * statement counted for the finalizer turns, the port's result. One promise
 * per statement unless a turn is due.
 */
async function runStatement(
  execute: () => Promise<ResultSet>,
  params: readonly SqlValue[],
): Promise<QueryResult> {
  let result: ResultSet;
  try {
    result = await execute();
  } catch (error) {
    throw translate(error, "statement failed", true);
  }
  const turn = finalizerTurns.afterStatement(params);
  if (turn !== undefined) await turn;
  const lastInsertRowid =
    result.lastInsertRowid === undefined ? undefined : normalizeInteger(result.lastInsertRowid);
  return { rows: fromResultSet(result), changes: result.rowsAffected, lastInsertRowid };
}
