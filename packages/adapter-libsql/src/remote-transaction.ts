/**
 * A transaction on a libSQL server. Two things differ from a local one:
 * - The client sends BEGIN together with the first statement. A write
 *   transaction sends a no-op statement as it begins (`begin`), so a server
 *   that answers busy answers there, where core retries until its busy
 *   deadline, as it does for a local BEGIN IMMEDIATE; one round trip more
 *   per write transaction buys that.
 * - The server may end the transaction by itself (sqld takes a write lock
 *   away after 5 s while another writer waits, and an idle HTTP stream
 *   expires): every statement it ran is rolled back, later statements are
 *   refused (the client sends them only while a transaction is open), and
 *   the commit fails `transaction_timeout` — whole, never half. The same
 *   when the connection is lost, or when the server's SQLite rolled the
 *   transaction back itself (SQLITE_FULL, an I/O error): the client learns
 *   that only from the answer to a later statement — the undo of a
 *   savepoint finds no such savepoint, or the client will not run a
 *   statement outside the transaction (`transaction_closed`). Each of those
 *   answers marks the transaction ended (`active` false), so core keeps the
 *   failure's own code.
 */
import type { ResultSet, Transaction } from "@libsql/client";
import {
  type DriverTransaction,
  type QueryResult,
  RunledgerError,
  type SqlValue,
} from "@runledger/core/port";
import { translate } from "./errors.js";
import { readOnlyRefusal, remoteResult, transactionLost } from "./remote.js";
import { transactionTimeout } from "./remote-errors.js";
import { toDriverParams } from "./values.js";

/** Begins a transaction on the server; a write transaction takes the write lock now. */
export async function beginRemote(
  open: () => Promise<Transaction>,
  mode: "immediate" | "deferred",
  readOnly: boolean,
): Promise<RemoteTransaction> {
  let transaction: Transaction;
  try {
    transaction = await open();
  } catch (error) {
    throw translate(error, "begin failed", true);
  }
  if (mode === "immediate") {
    try {
      await transaction.execute("SELECT 1");
    } catch (error) {
      transaction.close();
      throw translate(error, "begin failed", true);
    }
  }
  return new RemoteTransaction(transaction, readOnly);
}

export class RemoteTransaction implements DriverTransaction {
  readonly #transaction: Transaction;
  /** On a read-only connection a statement that changed rows is refused (the server has no query_only). */
  readonly #readOnly: boolean;
  #finished = false;
  /** A failure proved the server no longer holds this transaction. */
  #ended = false;

  constructor(transaction: Transaction, readOnly: boolean) {
    this.#transaction = transaction;
    this.#readOnly = readOnly;
  }

  /** Whether the server still holds the transaction, as far as its answers have told (see above). */
  get active(): boolean {
    return !this.#finished && !this.#ended && !this.#transaction.closed;
  }

  /** The client's transaction, for the connection to end on close. */
  get client(): Transaction {
    return this.#transaction;
  }

  async execute(sql: string, params: readonly SqlValue[] = []): Promise<QueryResult> {
    this.#checkOpen();
    let result: ResultSet;
    try {
      result = await this.#transaction.execute({ sql, args: toDriverParams(params) });
    } catch (error) {
      throw this.#failure(error, "statement failed", sql);
    }
    if (this.#readOnly && result.rowsAffected > 0) {
      throw readOnlyRefusal("write", `the statement changed ${result.rowsAffected} rows`);
    }
    return remoteResult(result);
  }

  async executeScript(sql: string): Promise<void> {
    this.#checkOpen();
    if (this.#readOnly) throw readOnlyRefusal("run a script");
    try {
      await this.#transaction.executeMultiple(sql);
    } catch (error) {
      throw this.#failure(error, "script failed", sql);
    }
  }
  async commit(): Promise<void> {
    this.#checkOpen();
    try {
      await this.#transaction.commit();
      this.#finished = true;
    } catch (error) {
      if (transactionLost(error)) {
        this.#transaction.close();
        this.#finished = true;
        throw transactionTimeout("commit failed", error);
      }
      // A lost connection leaves nothing of ours open on the server: the rollback has nothing to
      // undo (core tells the caller the commit's outcome is unknown: commit_unknown).
      throw this.#failure(error, "commit failed", "COMMIT");
    }
  }

  async rollback(): Promise<void> {
    this.#checkOpen();
    this.#finished = true;
    if (this.#transaction.closed) return;
    if (this.#ended) {
      // Nothing of it is left on the server to undo.
      this.#transaction.close();
      return;
    }
    try {
      await this.#transaction.rollback();
    } catch (error) {
      // The server ended the transaction already (its lock taken away, its
      // stream expired, the connection lost): nothing of it was committed,
      // nothing is left to undo.
      const translated = translate(error, "rollback failed", true);
      this.#transaction.close();
      if (endsTransaction(translated, error)) return;
      throw translated;
    }
  }

  /** A failure as the port's error, noting when it proves the transaction ended. */
  #failure(error: unknown, doing: string, sql: string): RunledgerError {
    const translated = translate(error, doing, true);
    if (endsTransaction(translated, error) || undoFoundNothing(sql, error)) this.#ended = true;
    return translated;
  }

  #checkOpen(): void {
    if (this.#finished) {
      throw new RunledgerError(
        "transaction_closed",
        "this transaction has already committed or rolled back; start a new one",
      );
    }
  }
}

/**
 * Answers after which the server holds no transaction of ours: it took the
 * lock away, the stream expired, the connection is gone (the server rolls
 * back what a closed connection held; one never reached keeps nothing
 * reachable either, and its stream expires), or the client refused to run a
 * statement outside a transaction the server had ended.
 */
const ENDING_CODES: ReadonlySet<string> = new Set([
  "transaction_timeout",
  "stream_expired",
  "connection_lost",
  "server_unreachable",
  "transaction_closed",
]);

function endsTransaction(translated: RunledgerError, error: unknown): boolean {
  return ENDING_CODES.has(translated.code) || transactionLost(error);
}

/**
 * SQLite's answer to core's undo of a savepoint that went with the whole
 * transaction: the server's SQLite rolled it back by itself (SQLITE_FULL, an
 * I/O error). Core names its savepoints and undoes only open ones, so on a
 * live transaction this answer does not come.
 */
function undoFoundNothing(sql: string, error: unknown): boolean {
  const message = error instanceof Error ? error.message : String(error);
  return /^(ROLLBACK TO|RELEASE) /.test(sql) && /no such savepoint/i.test(message);
}
