/**
 * A transaction on a libSQL server, sent in as few round trips as the
 * protocol allows. Three things differ from a local one:
 * - Nothing is sent, not even the client's stream opened, until a statement
 *   needs its answer. The client sends BEGIN together with the first
 *   statement, and the write lock is taken there: no statement of its own.
 *   A transaction whose every statement was held back (below) reaches the
 *   server at COMMIT as one request: BEGIN, the statements, COMMIT, as the
 *   client's own write batch sends them. A server that answers
 *   busy answers that first request, whose BEGIN then failed, so nothing of
 *   it ran: it is sent again on a new transaction, with growing pauses,
 *   until the connection's busy deadline (as core retries a local BEGIN
 *   IMMEDIATE).
 * - Statements whose answer is not read — core's SAVEPOINT and RELEASE, and
 *   what core sends `{ later: true }` (a step's new tree nodes) — are held
 *   back and sent with the next statement, or with COMMIT, in one batch.
 *   Each statement of a batch runs only if the one before it succeeded, and
 *   a failure names the statement that failed. The failure of a held-back
 *   statement surfaces at a later call, so it ends the transaction (`active`
 *   false: core dooms it, and it is never committed). A step (a savepoint,
 *   its event, its nodes, its release, the commit) is two round trips; one
 *   when core sends its event held back too (an optimistic transaction).
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
import type { InStatement, ResultSet } from "@libsql/client";
import {
  type DriverTransaction,
  type QueryResult,
  type RunledgerError,
  type SqlValue,
  transactionClosedError,
} from "@runledger/core/port";
import { translate } from "./errors.js";
import type { StreamTransaction } from "./kept-transaction.js";
import { RemoteRetry, readOnlyRefusal, remoteResult, transactionLost } from "./remote.js";
import { transactionTimeout } from "./remote-errors.js";
import { toDriverParams } from "./values.js";

/** How a remote transaction is (re)opened, and how long a busy server is waited for. */
export interface RemoteBegin {
  readonly open: () => Promise<StreamTransaction>;
  /** Sends `statements` as one write transaction of their own: BEGIN, each in turn, COMMIT. */
  readonly whole: (statements: InStatement[]) => Promise<unknown>;
  readonly readOnly: boolean;
  /** Until when a first request the server answered busy is sent again (the caller's whole deadline). */
  readonly busyDeadlineMs: number;
}

/** Begins a transaction on the server: nothing is sent until a statement needs its answer. */
export function beginRemote(begin: RemoteBegin): RemoteTransaction {
  return new RemoteTransaction(begin);
}

async function openTransaction(begin: RemoteBegin): Promise<StreamTransaction> {
  let transaction: StreamTransaction;
  try {
    transaction = await begin.open();
  } catch (error) {
    throw translate(error, "begin failed", true);
  }
  return transaction;
}

/** A statement whose answer core does not read: held back and sent with the next one. */
const HELD_BACK = /^(SAVEPOINT|RELEASE) [A-Za-z_][A-Za-z0-9_]*$/;

const NO_ROWS: QueryResult = { rows: [], changes: 0, lastInsertRowid: undefined };

export class RemoteTransaction implements DriverTransaction {
  /** The client's transaction, once opened (when the first request is sent). */
  #transaction: StreamTransaction | undefined;
  /** Its opening, shared by calls made side by side (an unawaited call and the next one). */
  #opening: Promise<StreamTransaction> | undefined;
  readonly #begin: RemoteBegin;
  /** Statements held back (HELD_BACK, or sent `later`), in order, not yet sent. */
  readonly #held: InStatement[] = [];
  /** Whether a request reached the server with BEGIN in it (so a busy answer no longer means nothing ran). */
  #begun = false;
  #finished = false;
  /** A failure proved the server no longer holds this transaction. */
  #ended = false;

  constructor(begin: RemoteBegin) {
    this.#begin = begin;
  }

  /** Whether the server still holds the transaction, as far as its answers have told (see above). */
  get active(): boolean {
    return !this.#finished && !this.#ended && !this.#closed;
  }

  /** Not yet committed or rolled back, and not closed by the client: the connection's one transaction. */
  get open(): boolean {
    return !this.#finished && !this.#closed;
  }

  /** Ends the client's transaction, if one was opened (the connection's close). */
  close(): void {
    this.#transaction?.close();
  }

  get #closed(): boolean {
    return this.#transaction?.closed ?? false;
  }

  async execute(
    sql: string,
    params: readonly SqlValue[] = [],
    options?: { readonly later?: boolean },
  ): Promise<QueryResult> {
    this.#checkOpen();
    if (params.length === 0 && HELD_BACK.test(sql)) {
      this.#held.push(sql);
      return NO_ROWS;
    }
    // On a read-only connection nothing is held: a write must be refused where it is made.
    if (options?.later === true && !this.#begin.readOnly) {
      this.#held.push({ sql, args: toDriverParams(params) });
      return NO_ROWS;
    }
    const result = (await this.#send({ sql, args: toDriverParams(params) }, "statement failed"))!;
    // On a read-only connection a statement that changed rows is refused (the server has no query_only).
    if (this.#begin.readOnly && result.rowsAffected > 0) {
      throw readOnlyRefusal("write", `the statement changed ${result.rowsAffected} rows`);
    }
    return remoteResult(result);
  }

  async executeScript(sql: string): Promise<void> {
    this.#checkOpen();
    if (this.#begin.readOnly) throw readOnlyRefusal("run a script");
    if (this.#held.length > 0) await this.#send(undefined, "statement failed");
    try {
      await (await this.#opened()).executeMultiple(sql);
      this.#begun = true;
    } catch (error) {
      throw this.#failure(error, "script failed", sql);
    }
  }

  async commit(): Promise<void> {
    this.#checkOpen();
    // A SAVEPOINT or RELEASE still held at COMMIT is dropped: a failure of any
    // statement sent with COMMIT ends the whole transaction (none of it is
    // committed), so no savepoint of them is ever rolled back to, and COMMIT
    // releases every savepoint.
    const held = this.#held.filter(isWrite);
    this.#held.length = 0;
    // Nothing sent yet, and held-back writes: the whole transaction in one request.
    if (!this.#begun && held.length > 0) return this.#commitWhole(held);
    const batch: InStatement[] = this.#begun ? [...held, "COMMIT"] : [];
    const transaction = this.#transaction;
    try {
      if (batch.length > 1 && transaction !== undefined) {
        // The held-back statements and COMMIT in one round trip; the client sees a batch, so its
        // transaction is closed here, as its own commit would close it.
        await transaction.batch(batch);
        transaction.close();
      } else if (transaction !== undefined) {
        // Held-back statements of a transaction that sent nothing else change nothing: dropped.
        await transaction.commit();
      }
      this.#finished = true;
    } catch (error) {
      if (transactionLost(error)) {
        transaction?.close();
        this.#finished = true;
        throw transactionTimeout("commit failed", error);
      }
      // A lost connection leaves nothing of ours open on the server: the rollback has nothing to
      // undo (core tells the caller the commit's outcome is unknown: commit_unknown).
      throw this.#failure(
        error,
        "commit failed",
        sqlOf(batch[failedIndex(error, batch.length)] ?? "COMMIT"),
      );
    }
  }

  /**
   * A transaction none of whose statements was sent: BEGIN, the statements
   * and COMMIT as one write batch (one request: on the connection's kept
   * stream, whole-batch.ts, or else the client's, which opens and closes a
   * stream for it). Each statement runs only if the one before
   * it succeeded, and a failure rolls it all back. A busy server answers
   * its BEGIN, before anything ran: it is sent again until the busy
   * deadline, as a first request is (#send).
   */
  async #commitWhole(statements: InStatement[]): Promise<void> {
    const retry = new RemoteRetry(this.#begin.busyDeadlineMs);
    for (;;) {
      try {
        await this.#begin.whole(statements);
        this.#finished = true;
        return;
      } catch (error) {
        // The batch rolled itself back (or never began): nothing is left to undo.
        this.#ended = true;
        const index = (error as { statementIndex?: unknown } | null)?.statementIndex;
        const translated = translate(error, "commit failed", true);
        // A statement's failure names its index; BEGIN's does not, and only BEGIN waits on the lock.
        if (typeof index === "number" || translated.code !== "busy") throw translated;
        await retry.afterFailure(translated);
      }
    }
  }

  async rollback(): Promise<void> {
    this.#checkOpen();
    this.#finished = true;
    // Never sent, so nothing of them is on the server.
    this.#held.length = 0;
    // A call still on its way (work the callback left behind) may be opening it: wait for that,
    // so the undo follows the call instead of leaving its BEGIN holding the lock.
    const transaction = await this.#opening?.catch(() => undefined);
    // Never opened, or closed: nothing of it is on the server.
    if (transaction === undefined || transaction.closed) return;
    if (this.#ended) {
      // Nothing of it is left on the server to undo.
      transaction.close();
      return;
    }
    try {
      await transaction.rollback();
    } catch (error) {
      // The server ended the transaction already (its lock taken away, its
      // stream expired, the connection lost): nothing of it was committed,
      // nothing is left to undo.
      const translated = translate(error, "rollback failed", true);
      transaction.close();
      if (endsTransaction(translated, error)) return;
      throw translated;
    }
  }

  /**
   * Sends the held-back statements and `statement` (when given) in one
   * batch: `statement`'s result. A first request the server answered busy
   * (its BEGIN failed, the client closed the transaction, nothing ran) is
   * sent again on a new transaction until the busy deadline.
   */
  async #send(statement: InStatement | undefined, doing: string): Promise<ResultSet | undefined> {
    const batch: InStatement[] = [...this.#held];
    this.#held.length = 0;
    if (statement !== undefined) batch.push(statement);
    const retry = this.#begun ? undefined : new RemoteRetry(this.#begin.busyDeadlineMs);
    for (;;) {
      const transaction = await this.#opened();
      try {
        const results = await transaction.batch(batch);
        this.#begun = true;
        return statement === undefined ? undefined : results.at(-1);
      } catch (error) {
        const index = failedIndex(error, batch.length);
        const translated = this.#failure(error, doing, sqlOf(batch[index]!));
        // A held-back statement's failure reaches a caller that did not make it: the
        // transaction ends here, and is never committed.
        if (statement === undefined || index < batch.length - 1) this.#ended = true;
        if (retry === undefined || !transaction.closed || translated.code !== "busy") {
          this.#begun = true;
          throw translated;
        }
        // BEGIN was refused: nothing of this transaction ran. Wait, then begin again.
        this.#ended = false;
        await retry.afterFailure(translated);
        this.#transaction = undefined;
        this.#opening = undefined;
      }
    }
  }

  /** The client's transaction, opened by the first call that needs it. */
  #opened(): Promise<StreamTransaction> {
    this.#opening ??= openTransaction(this.#begin).then((transaction) => {
      this.#transaction = transaction;
      return transaction;
    });
    return this.#opening;
  }

  /** A failure as the port's error, noting when it proves the transaction ended. */
  #failure(error: unknown, doing: string, sql: string): RunledgerError {
    const translated = translate(error, doing, true);
    if (endsTransaction(translated, error) || undoFoundNothing(sql, error)) this.#ended = true;
    return translated;
  }

  #checkOpen(): void {
    if (this.#finished) throw transactionClosedError();
  }
}

/** A statement's SQL text. */
function sqlOf(statement: InStatement): string {
  return typeof statement === "string" ? statement : statement.sql;
}

/** A held-back statement that writes (not a bare SAVEPOINT or RELEASE). */
function isWrite(statement: InStatement): boolean {
  return typeof statement !== "string";
}

/** The position in a batch of the statement a failure names (the last one when it names none). */
function failedIndex(error: unknown, length: number): number {
  const index = (error as { statementIndex?: unknown } | null)?.statementIndex;
  return typeof index === "number" && index >= 0 && index < length ? index : length - 1;
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
