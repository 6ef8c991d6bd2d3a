/**
 * A write transaction sent whole over one stream kept open for the
 * connection's life, over WebSocket or HTTP. @libsql/client opens a stream
 * for every batch and closes it after: over WebSocket three messages and
 * their server work for what is one request, over HTTP a stream made and
 * dropped by the server each time (measured against sqld, a step's two rows
 * in one batch: over ws 624 steps/s through the client, 1,709 on a kept
 * stream; over http 202–231 and 261–350). A transaction none of
 * whose statements needed an answer (an optimistic step,
 * remote-transaction.ts) goes here as one batch on the kept stream: BEGIN
 * IMMEDIATE, each statement only if the one before it succeeded, COMMIT only
 * if they all did, ROLLBACK unless COMMIT succeeded — so the stream is never
 * left inside a transaction. Its failures are shaped as @libsql/client's own
 * (a `code`, and `statementIndex` for a statement's), so the adapter's
 * translation tells them apart as it does the client's. A stream or socket
 * that failed is dropped, and the next batch opens a new one. An HTTP stream
 * left idle expires on the server (sqld: about 10 s), which then refuses the
 * next batch before running any of it: that batch is sent again on a new
 * stream.
 */
import { type InStatement, LibsqlError } from "@libsql/client";
import * as hrana from "@libsql/hrana-client";

/** At most this many SQL texts are stored on the server per socket or stream (sqld keeps a bounded number). */
const STORED_SQL = 64;

type Protocol = "ws" | "http";

export class KeptStream {
  readonly #protocol: Protocol;
  readonly #url: string;
  readonly #authToken: string | undefined;
  #client: hrana.WsClient | hrana.HttpClient | undefined;
  #stream: hrana.Stream | undefined;
  /** Closed with its connection: no socket is opened again. */
  #closed = false;
  /** A socket being opened, shared by the calls that need it meanwhile. */
  #opening: Promise<hrana.Stream> | undefined;
  /** SQL texts stored on the current socket, so a batch names them instead of sending them. */
  readonly #stored = new Map<string, hrana.Sql>();

  constructor(protocol: Protocol, url: string, authToken: string | undefined) {
    this.#protocol = protocol;
    this.#url = url;
    this.#authToken = authToken;
  }

  /** Sends `statements` as one write transaction; throws as @libsql/client's `batch(…, "write")` would. */
  async writeBatch(statements: readonly InStatement[]): Promise<void> {
    try {
      await this.#send(statements);
    } catch (error) {
      // An expired HTTP stream refused the batch before running any of it: once more, on a new one.
      if (!(error instanceof hrana.ResponseError && error.code === "STREAM_EXPIRED")) {
        throw shaped(error);
      }
      await this.#send(statements).catch((again: unknown) => {
        throw shaped(again);
      });
    }
  }

  /** One attempt: the batch on the kept stream. Throws hrana's failures as they come. */
  async #send(statements: readonly InStatement[]): Promise<void> {
    let stream: hrana.Stream;
    try {
      stream = await this.#open();
    } catch (error) {
      this.#drop();
      throw error;
    }
    const batch = stream.batch(false);
    const begin = batch.step();
    const began = quiet(begin.run("BEGIN IMMEDIATE"));
    let last = begin;
    const ran = statements.map((statement) => {
      const step = batch.step().condition(hrana.BatchCond.ok(last));
      last = step;
      return quiet(step.run(this.#stmt(stream, statement)));
    });
    const commit = batch.step().condition(hrana.BatchCond.ok(last));
    const committed = quiet(commit.run("COMMIT"));
    void quiet(
      batch
        .step()
        .condition(hrana.BatchCond.not(hrana.BatchCond.ok(commit)))
        .run("ROLLBACK"),
    );
    try {
      await batch.execute();
    } catch (error) {
      // The socket or the stream failed: what the server did with the batch is not known here.
      this.#drop();
      throw error;
    }
    const beginOutcome = await began;
    if (!beginOutcome.ok) throw shaped(beginOutcome.error);
    for (const [index, outcome] of (await Promise.all(ran)).entries()) {
      if (!outcome.ok) throw shaped(outcome.error, index);
    }
    const commitOutcome = await committed;
    if (!commitOutcome.ok) throw shaped(commitOutcome.error);
  }

  /** Closes the stream and its socket for good (the connection's close). */
  close(): void {
    this.#closed = true;
    this.#drop();
  }

  /** Drops the stream and its socket (after a failure): the next batch opens new ones. */
  #drop(): void {
    const client = this.#client;
    this.#client = undefined;
    this.#stream = undefined;
    this.#stored.clear();
    client?.close();
  }

  /** The kept stream, opened with its socket when there is none or the last one failed. */
  #open(): Promise<hrana.Stream> {
    const stream = this.#stream;
    if (stream !== undefined && !stream.closed && this.#client?.closed === false) {
      return Promise.resolve(stream);
    }
    this.#opening ??= this.#connect().finally(() => {
      this.#opening = undefined;
    });
    return this.#opening;
  }

  async #connect(): Promise<hrana.Stream> {
    this.#drop();
    if (this.#closed) throw new LibsqlError("the connection is closed", "CLIENT_CLOSED");
    const client =
      this.#protocol === "ws"
        ? hrana.openWs(this.#url, this.#authToken)
        : hrana.openHttp(this.#url, this.#authToken);
    this.#client = client;
    // The server's protocol version, which storing SQL texts needs (its hello over ws).
    await client.getVersion();
    if (this.#closed) {
      client.close();
      throw new LibsqlError("the connection is closed", "CLIENT_CLOSED");
    }
    this.#stream = client.openStream();
    return this.#stream;
  }

  #stmt(stream: hrana.Stream, statement: InStatement): hrana.Stmt {
    const { sql, args } =
      typeof statement === "string" ? { sql: statement, args: undefined } : statement;
    let stored = this.#stored.get(sql);
    if (stored === undefined && this.#stored.size < STORED_SQL) {
      // Stored on the socket over ws, on the stream over http: both kept, and dropped together.
      stored =
        this.#client instanceof hrana.WsClient
          ? this.#client.storeSql(sql)
          : (stream as hrana.HttpStream).storeSql(sql);
      this.#stored.set(sql, stored);
    }
    const stmt = new hrana.Stmt(stored ?? sql);
    if (Array.isArray(args)) stmt.bindIndexes(args as hrana.InValue[]);
    return stmt;
  }
}

type Outcome = { readonly ok: true } | { readonly ok: false; readonly error: unknown };

/** A step's promise as its outcome, never rejecting (so none is left unhandled). */
function quiet(pending: Promise<unknown>): Promise<Outcome> {
  return pending.then(
    () => ({ ok: true }),
    (error: unknown) => ({ ok: false, error }),
  );
}

/** A hrana failure shaped as @libsql/client's (its code, and the statement's index for a statement's). */
function shaped(error: unknown, statementIndex?: number): unknown {
  if (!(error instanceof hrana.ClientError)) return error;
  const failure = new LibsqlError(error.message, codeOf(error), undefined, undefined, error);
  if (statementIndex !== undefined) {
    Object.defineProperty(failure, "statementIndex", { value: statementIndex, enumerable: true });
  }
  return failure;
}

/** The code @libsql/client gives each kind of hrana failure. */
function codeOf(error: hrana.ClientError): string {
  if (error instanceof hrana.ResponseError && error.code !== undefined) return error.code;
  if (error instanceof hrana.ClosedError) {
    return error.cause instanceof hrana.ClientError ? codeOf(error.cause) : "HRANA_CLOSED_ERROR";
  }
  if (error instanceof hrana.WebSocketError) return "HRANA_WEBSOCKET_ERROR";
  if (error instanceof hrana.ProtoError) return "HRANA_PROTO_ERROR";
  if (error instanceof hrana.ProtocolVersionError) return "PROTOCOL_VERSION_ERROR";
  if (error instanceof hrana.InternalError) return "INTERNAL_ERROR";
  return "UNKNOWN";
}
