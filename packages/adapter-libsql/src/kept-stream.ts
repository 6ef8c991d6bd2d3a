/**
 * A write transaction sent whole over one stream kept open for the
 * connection's life: the interface, and its WebSocket side (HTTP's is
 * kept-http-stream.ts). @libsql/client opens a stream for every batch and
 * closes it after: over WebSocket three messages and their server work for
 * what is one request, over HTTP a stream made and dropped by the server
 * each time (measured against sqld, a step's two rows in one batch: over ws
 * 624 steps/s through the client, 1,709 on a kept stream). A transaction
 * none of whose statements needed an answer (an optimistic step,
 * remote-transaction.ts) goes as one batch on the kept stream: BEGIN
 * IMMEDIATE, each statement only if the one before it succeeded, COMMIT only
 * if they all did, ROLLBACK unless COMMIT succeeded — so the stream is never
 * left inside a transaction. Its failures are shaped as @libsql/client's own
 * (a `code`, and `statementIndex` for a statement's), so the adapter's
 * translation tells them apart as it does the client's. A socket that failed
 * (the server restarted, say) is dropped, and the next batch opens a new one.
 */
import { type InStatement, LibsqlError } from "@libsql/client";
import * as hrana from "@libsql/hrana-client";

/** At most this many SQL texts are stored on the server per socket or stream (sqld keeps a bounded number). */
export const STORED_SQL = 64;

/** Where a connection sends a transaction whole. */
export interface KeptStream {
  /** Sends `statements` as one write transaction; throws as @libsql/client's `batch(…, "write")` would. */
  writeBatch(statements: readonly InStatement[]): Promise<void>;
  /** Closes the stream and its socket for good (the connection's close). */
  close(): void;
}

/** The kept stream over WebSocket, on @libsql/hrana-client's socket. */
export class KeptWsStream implements KeptStream {
  readonly #url: string;
  readonly #authToken: string | undefined;
  #client: hrana.WsClient | undefined;
  #stream: hrana.Stream | undefined;
  /** Closed with its connection: no socket is opened again. */
  #closed = false;
  /** A socket being opened, shared by the calls that need it meanwhile. */
  #opening: Promise<hrana.Stream> | undefined;
  /** SQL texts stored on the current socket, so a batch names them instead of sending them. */
  readonly #stored = new Map<string, hrana.Sql>();

  constructor(url: string, authToken: string | undefined) {
    this.#url = url;
    this.#authToken = authToken;
  }

  async writeBatch(statements: readonly InStatement[]): Promise<void> {
    try {
      await this.#send(statements);
    } catch (error) {
      throw shaped(error);
    }
  }

  /** The batch on the kept stream. Throws hrana's failures as they come. */
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
      return quiet(step.run(this.#stmt(statement)));
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
    const client = hrana.openWs(this.#url, this.#authToken);
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

  #stmt(statement: InStatement): hrana.Stmt {
    const { sql, args } =
      typeof statement === "string" ? { sql: statement, args: undefined } : statement;
    let stored = this.#stored.get(sql);
    if (stored === undefined && this.#stored.size < STORED_SQL) {
      // Stored on the socket, kept and dropped with it.
      stored = (this.#client as hrana.WsClient).storeSql(sql);
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
