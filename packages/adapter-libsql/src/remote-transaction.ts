/**
 * A transaction on a libSQL server. Two things differ from a local one:
 * - The client sends BEGIN together with the first statement, so a server
 *   that answers busy answers there: nothing ran yet, so the transaction is
 *   begun again and the statement re-sent, within the busy deadline.
 * - The server may end the transaction by itself (sqld takes a write lock
 *   away after 5 s while another writer waits, and an idle HTTP stream
 *   expires): every statement it ran is rolled back, later statements are
 *   refused (the client sends them only while a transaction is open), and
 *   the commit fails `transaction_timeout` — whole, never half.
 */
import type { Transaction } from "@libsql/client";
import {
  type DriverTransaction,
  type QueryResult,
  RunledgerError,
  type SqlValue,
} from "@runledger/core/port";
import { translate } from "./errors.js";
import { RemoteRetry, remoteResult, transactionLost } from "./remote.js";
import { transactionTimeout } from "./remote-errors.js";
import { toDriverParams } from "./values.js";

export class RemoteTransaction implements DriverTransaction {
  #transaction: Transaction;
  readonly #reopen: () => Promise<Transaction>;
  readonly #busyTimeoutMs: number;
  readonly #replaced: (transaction: Transaction) => void;
  /** True once a statement succeeded: BEGIN has reached the server. */
  #started = false;
  #finished = false;

  constructor(
    transaction: Transaction,
    reopen: () => Promise<Transaction>,
    busyTimeoutMs: number,
    replaced: (transaction: Transaction) => void,
  ) {
    this.#transaction = transaction;
    this.#reopen = reopen;
    this.#busyTimeoutMs = busyTimeoutMs;
    this.#replaced = replaced;
  }

  async execute(sql: string, params: readonly SqlValue[] = []): Promise<QueryResult> {
    this.#checkOpen();
    const statement = { sql, args: toDriverParams(params) };
    if (this.#started) {
      try {
        return remoteResult(await this.#transaction.execute(statement));
      } catch (error) {
        throw translate(error, "statement failed", true);
      }
    }
    const retry = new RemoteRetry(this.#busyTimeoutMs);
    for (;;) {
      try {
        const result = await this.#transaction.execute(statement);
        this.#started = true;
        return remoteResult(result);
      } catch (error) {
        const translated = translate(error, "statement failed", true);
        await retry.afterFailure(translated);
        // Busy at BEGIN: this transaction is spent; begin another.
        this.#transaction.close();
        this.#transaction = await this.#reopen();
        this.#replaced(this.#transaction);
      }
    }
  }

  async executeScript(sql: string): Promise<void> {
    this.#checkOpen();
    try {
      await this.#transaction.executeMultiple(sql);
      this.#started = true;
    } catch (error) {
      throw translate(error, "script failed", true);
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
      throw translate(error, "commit failed", true);
    }
  }

  async rollback(): Promise<void> {
    this.#checkOpen();
    this.#finished = true;
    if (this.#transaction.closed) return;
    try {
      await this.#transaction.rollback();
    } catch (error) {
      // The server ended the transaction already (its lock taken away, its
      // stream expired): nothing of it was committed, nothing is left to undo.
      const translated = translate(error, "rollback failed", true);
      this.#transaction.close();
      if (
        translated.code === "transaction_timeout" ||
        translated.code === "stream_expired" ||
        transactionLost(error)
      ) {
        return;
      }
      throw translated;
    }
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
