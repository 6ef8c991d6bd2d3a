/**
 * A write transaction held open on the connection's kept WebSocket stream
 * (kept-stream.ts), statement after statement, instead of on a stream
 * @libsql/client opens for it and closes after.
 *
 * Why: sqld makes a database connection of its own for every stream, and
 * its queue of writers waiting for the write lock (sqld 0.24,
 * connection_manager.rs) can keep the entry of a connection that left the
 * queue early (its checkpoint after a commit, refused busy while another's
 * checkpoint ran) and then closed. When that entry's turn comes, the lock
 * is handed to a connection that no longer exists, and every writer of the
 * database waits for it for good: the server spins, no BEGIN is ever
 * answered. Opening and closing a connection for every transaction, as the
 * client's `transaction()` does, is what leaves such entries behind (seen
 * with four processes writing one run: about one hang in five under load).
 * A kept stream is one connection for the life of ours; a turn handed to it
 * is taken by its next BEGIN. It also spares the server a connection, and
 * the client a stream, per transaction.
 *
 * What is kept of the client's transaction (what remote-transaction.ts
 * relies on): nothing is sent until the first batch, which carries BEGIN
 * IMMEDIATE before its statements; a BEGIN the server refused closes the
 * transaction (`closed`), so the caller begins again; each statement runs
 * only if the one before it succeeded, and — Hrana 3's `is_autocommit`
 * condition — only while the server still holds the transaction, so nothing
 * lands outside it after the server ended it (sqld takes the lock away after
 * 5 s while another writer waits): such a statement is answered
 * TRANSACTION_CLOSED. Failures are the client's (a LibsqlError with the
 * server's code, `statementIndex` for a statement's). A transaction closed
 * while the server may still hold it is rolled back on the stream, or the
 * socket is dropped, which ends it on the server: the stream never carries
 * one transaction's remains into the next.
 */
import type { InStatement, ResultSet, Row } from "@libsql/client";
import { LibsqlError } from "@libsql/client";
import {
  type BatchResult,
  batchRequest,
  fromProto,
  type ProtoError,
  protoError,
  type StoredSql,
  statementStep,
} from "./whole-batch.js";

/**
 * What a remote transaction uses of @libsql/client's `Transaction`: the
 * client's own, or a kept stream's (below).
 */
export interface StreamTransaction {
  batch(statements: InStatement[]): Promise<ResultSet[]>;
  executeMultiple(sql: string): Promise<void>;
  commit(): Promise<void>;
  rollback(): Promise<void>;
  close(): void;
  readonly closed: boolean;
}

/** One socket's stream, as a transaction on it sees it: its requests fail once that socket is gone. */
export interface StreamSession {
  /** Sends `requests` in order; resolves with the last one's response. */
  send(requests: readonly unknown[]): Promise<unknown>;
  /** The SQL texts stored on this socket's stream. */
  readonly stored: StoredSql;
  /** Ends the socket, and with it whatever the server holds for its stream. */
  drop(reason: unknown): void;
}

/** Runs a step only while the server holds the transaction (Hrana 3). */
const IN_TRANSACTION = { type: "not", cond: { type: "is_autocommit" } } as const;

export class KeptTransaction implements StreamTransaction {
  readonly #session: StreamSession;
  /** BEGIN was sent and not refused, and no COMMIT or ROLLBACK since: the server may hold the transaction. */
  #begun = false;
  /** Committed, rolled back, refused at BEGIN, or closed by the caller. */
  #closed = false;

  constructor(session: StreamSession) {
    this.#session = session;
  }

  get closed(): boolean {
    return this.#closed;
  }

  async batch(statements: InStatement[]): Promise<ResultSet[]> {
    if (this.#closed) throw closedTransaction("execute statements");
    const first = !this.#begun;
    const requests: unknown[] = [];
    const steps: unknown[] = [];
    if (first) steps.push({ stmt: { sql: "BEGIN IMMEDIATE", want_rows: false } });
    const offset = steps.length;
    for (const statement of statements) {
      const previous = steps.length - 1;
      steps.push({
        condition:
          previous < 0 ? IN_TRANSACTION : { type: "and", conds: [ok(previous), IN_TRANSACTION] },
        stmt: statementStep(statement, this.#session.stored, requests, true),
      });
    }
    requests.push(batchRequest(steps));
    // From the moment BEGIN is sent the server may hold the transaction: a rollback or close made
    // before its answer (a call the callback left running) follows it on the stream.
    if (first) this.#begun = true;
    let result: BatchResult;
    try {
      result = batchResult(await this.#session.send(requests));
    } catch (error) {
      // Whether BEGIN ran is not known: the socket is dropped, which ends it on the server if it did.
      if (first) this.#abandon(error);
      throw error;
    }
    const errors = result.step_errors ?? [];
    const results = result.step_results ?? [];
    const refused = first ? errors[0] : undefined;
    if (refused !== null && refused !== undefined) {
      this.#begun = false;
      this.#closed = true;
      throw fromProto(refused);
    }
    const sets: ResultSet[] = [];
    for (let index = 0; index < statements.length; index++) {
      const error = errors[index + offset];
      if (error !== null && error !== undefined) throw fromProto(error, index);
      const stepResult = results[index + offset];
      if (stepResult === null || stepResult === undefined) throw notRun(index);
      sets.push(resultSet(stepResult as StmtResult));
    }
    const last = statements.at(-1);
    if (last !== undefined && endsTransaction(last)) {
      this.#begun = false;
      this.#closed = true;
    }
    return sets;
  }

  async executeMultiple(sql: string): Promise<void> {
    if (this.#closed) throw closedTransaction("execute statements");
    if (!this.#begun) await this.batch([]);
    await this.#session.send([{ type: "sequence", sql }]);
  }

  /**
   * COMMIT on its own, not guarded: after the server ended the transaction
   * it answers "no transaction is active", as it answers the client's. The
   * transaction is closed whatever the answer; one the server may still
   * hold (a COMMIT it refused) is rolled back.
   */
  async commit(): Promise<void> {
    if (this.#closed) throw closedTransaction("commit the transaction");
    if (!this.#begun) {
      this.#closed = true;
      return;
    }
    try {
      const commit = batchRequest([{ stmt: { sql: "COMMIT", want_rows: false } }]);
      const refused = batchResult(await this.#session.send([commit])).step_errors?.[0];
      if (refused !== null && refused !== undefined) throw fromProto(refused);
      this.#begun = false;
    } finally {
      this.close();
    }
  }

  async rollback(): Promise<void> {
    if (this.#closed) return;
    this.#closed = true;
    if (!this.#begun) return;
    this.#begun = false;
    try {
      await this.#session.send([rollbackBatch()]);
    } catch (error) {
      this.#session.drop(error);
      throw error;
    }
  }

  /** Rolls back what the server may still hold, without waiting; a failure drops the socket instead. */
  close(): void {
    if (this.#closed && !this.#begun) return;
    this.#closed = true;
    if (!this.#begun) return;
    this.#begun = false;
    this.#session.send([rollbackBatch()]).then(
      (response) => {
        const refused = batchResult(response).step_errors?.[0];
        if (refused !== null && refused !== undefined) this.#session.drop(fromProto(refused));
      },
      (error: unknown) => this.#session.drop(error),
    );
  }

  /** A first request whose outcome is unknown: the transaction is closed, and the socket dropped. */
  #abandon(error: unknown): void {
    this.#begun = false;
    this.#closed = true;
    this.#session.drop(error);
  }
}

/** A statement's result as Hrana sends it (JSON). */
interface StmtResult {
  readonly cols: ReadonlyArray<{
    readonly name?: string | null;
    readonly decltype?: string | null;
  }>;
  readonly rows: ReadonlyArray<ReadonlyArray<HranaValue>>;
  readonly affected_row_count: number;
  readonly last_insert_rowid?: string | null;
}

type HranaValue =
  | { readonly type: "null" }
  | { readonly type: "integer"; readonly value: string }
  | { readonly type: "float"; readonly value: number }
  | { readonly type: "text"; readonly value: string }
  | { readonly type: "blob"; readonly base64: string };

function ok(step: number): unknown {
  return { type: "ok", step };
}

function rollbackBatch(): unknown {
  return batchRequest([{ condition: IN_TRANSACTION, stmt: { sql: "ROLLBACK", want_rows: false } }]);
}

/** COMMIT or ROLLBACK as a statement of a batch: once it ran, the transaction is over. */
function endsTransaction(statement: InStatement): boolean {
  const sql = typeof statement === "string" ? statement : statement.sql;
  return /^\s*(COMMIT|END|ROLLBACK)\s*;?\s*$/i.test(sql);
}

function batchResult(response: unknown): BatchResult {
  const result = (response as { result?: BatchResult } | null)?.result;
  if (result === undefined) throw protoError("the server answered a batch without its result");
  return result;
}

/**
 * The rows of a statement as @libsql/client gives them (intMode "bigint"):
 * each row an array of its values, also named by column; integers as
 * bigint, blobs as ArrayBuffer.
 */
function resultSet(result: StmtResult): ResultSet {
  const columns = result.cols.map((column) => column.name ?? "");
  const columnTypes = result.cols.map((column) => column.decltype ?? "");
  const rows = result.rows.map((values) => {
    const row: unknown[] = values.map(fromHrana);
    for (let c = 0; c < columns.length; c++) {
      const name = columns[c]!;
      if (!Object.hasOwn(row, name)) {
        Object.defineProperty(row, name, { value: row[c], enumerable: true });
      }
    }
    return row as unknown as Row;
  });
  const rowid = result.last_insert_rowid;
  const set = {
    columns,
    columnTypes,
    rows,
    rowsAffected: result.affected_row_count,
    lastInsertRowid: rowid === null || rowid === undefined ? undefined : BigInt(rowid),
    toJSON: () => ({ columns, columnTypes, rows, rowsAffected: result.affected_row_count }),
  };
  return set as ResultSet;
}

function fromHrana(value: HranaValue): unknown {
  switch (value.type) {
    case "null":
      return null;
    case "integer":
      return BigInt(value.value);
    case "float":
    case "text":
      return value.value;
    case "blob": {
      const bytes = Buffer.from(value.base64, "base64");
      return bytes.buffer.slice(bytes.byteOffset, bytes.byteOffset + bytes.byteLength);
    }
    default:
      throw protoError(`the server sent a value of an unknown type: ${JSON.stringify(value)}`);
  }
}

/** A statement the server skipped because it no longer held the transaction, as the client reports it. */
function notRun(index: number): LibsqlError {
  return fromProto(
    {
      message:
        "Statement in a transaction was not executed, probably because the transaction has been rolled back",
      code: "TRANSACTION_CLOSED",
    } satisfies ProtoError,
    index,
  );
}

function closedTransaction(action: string): LibsqlError {
  return new LibsqlError(
    `Cannot ${action} because the transaction is closed`,
    "TRANSACTION_CLOSED",
  );
}
