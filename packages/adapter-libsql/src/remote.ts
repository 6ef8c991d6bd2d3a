/**
 * The small pieces a connection to a libSQL server (sqld, Turso) needs that
 * a local file does not: the server answers busy without a busy handler on
 * this side, so the adapter retries within the connection's busy deadline;
 * the server has no `query_only` to set, so a read-only connection enforces
 * itself; and a result set carries no native statement to finalize.
 */
import type { Client, ResultSet } from "@libsql/client";
import {
  normalizeInteger,
  type QueryResult,
  RunledgerError,
  type SqlValue,
} from "@runledger/core/port";
import { translate } from "./errors.js";
import { fromResultSet, toDriverParams } from "./values.js";

/**
 * Retries while the server answers busy, until `deadlineMs` from its
 * creation, with growing, jittered pauses (as core retries BEGIN locally).
 * `afterFailure` returns after the pause when the failure may be retried and
 * throws it otherwise.
 */
export class RemoteRetry {
  readonly #started = Date.now();
  readonly #deadlineMs: number;
  #pause = 2;

  constructor(deadlineMs: number) {
    this.#deadlineMs = deadlineMs;
  }

  async afterFailure(error: unknown): Promise<void> {
    if (!(error instanceof RunledgerError) || error.code !== "busy") throw error;
    const elapsed = Date.now() - this.#started;
    if (elapsed >= this.#deadlineMs) {
      throw new RunledgerError(
        "busy",
        `the server stayed busy for ${elapsed} ms (deadline ${this.#deadlineMs} ms); retry later or raise busyTimeoutMs`,
        { cause: error, ...(error.sqliteCode ? { sqliteCode: error.sqliteCode } : {}) },
      );
    }
    const wait = Math.min(this.#pause * (0.5 + Math.random()), this.#deadlineMs - elapsed);
    await new Promise<void>((resolve) => setTimeout(resolve, wait));
    this.#pause = Math.min(this.#pause * 2, 50);
  }
}

/** The port's result of a remote statement (integers exact: the client runs in bigint mode). */
export function remoteResult(result: ResultSet): QueryResult {
  return {
    rows: fromResultSet(result),
    changes: result.rowsAffected,
    lastInsertRowid:
      result.lastInsertRowid === undefined ? undefined : normalizeInteger(result.lastInsertRowid),
  };
}

/**
 * One statement on a read-only remote connection: inside a transaction that
 * is always rolled back, so nothing it does persists, and refused with
 * `read_only` when it changed rows.
 */
export async function readOnlyRemote(
  client: Client,
  sql: string,
  params: readonly SqlValue[],
): Promise<QueryResult> {
  let transaction: Awaited<ReturnType<Client["transaction"]>>;
  try {
    transaction = await client.transaction("deferred");
  } catch (error) {
    throw translate(error, "begin failed", true);
  }
  try {
    const result = await transaction.execute({ sql, args: toDriverParams(params) });
    if (result.rowsAffected > 0) {
      throw readOnlyRefusal(
        "write",
        `the statement changed ${result.rowsAffected} rows (rolled back)`,
      );
    }
    return remoteResult(result);
  } catch (error) {
    throw translate(error, "statement failed", true);
  } finally {
    try {
      await transaction.rollback();
    } catch {
      // the server ended it already; nothing of it was committed
    }
  }
}

/**
 * The adapter's own refusal on a read-only remote connection. It carries
 * SQLITE_READONLY, the code a local connection's refusal carries, so both
 * read the same to a caller; its cause says what the adapter saw.
 */
export function readOnlyRefusal(
  what: string,
  seen = "the connection was opened read-only",
): RunledgerError {
  return new RunledgerError(
    "read_only",
    `cannot ${what} on a read-only connection; open it writable`,
    {
      sqliteCode: "SQLITE_READONLY",
      cause: new Error(`${seen}; a libSQL server has no query_only, so the adapter refuses it`),
    },
  );
}

/** A commit the server answered with "no transaction is active": its lock was taken away before. */
export function transactionLost(error: unknown): boolean {
  const message = error instanceof Error ? error.message : String(error);
  return /no transaction is active/i.test(message);
}
