/**
 * A write transaction sent whole over one stream kept open for the
 * connection's life: the interface, and its WebSocket side (HTTP's is
 * kept-http-stream.ts). @libsql/client opens a stream for every batch and
 * closes it after: over WebSocket three messages and their server work for
 * what is one request (measured against sqld, a step's two rows in one
 * batch: 624 steps/s through the client, 1,709 on a kept stream). A
 * transaction none of whose statements needed an answer (an optimistic
 * step, remote-transaction.ts) goes here as one batch (whole-batch.ts).
 *
 * An ordinary write transaction (one that reads answers as it goes) is held
 * on the same stream when the server speaks Hrana 3 (kept-transaction.ts
 * says why): one server connection for the life of ours, never one per
 * transaction.
 *
 * The socket speaks Hrana 3 (JSON; Hrana 2 when the server offers no more)
 * itself, on the WebSocket class
 * @libsql/hrana-client uses (`ws`): a hello with the token, one stream
 * opened, then a request a batch — the client's own machinery (its queues,
 * its encoders, js-base64) cost ~0.16 ms of CPU a batch more than this, a
 * seventh of a step's (measured: 364 against 207 µs a raw batch). A socket
 * that closes or fails fails what it had in flight, as @libsql/client's
 * would (HRANA_WEBSOCKET_ERROR, "closed with code …"), and the next batch
 * opens a new one: after a server restarts, say.
 */
import { type InStatement, LibsqlError } from "@libsql/client";
import { WebSocket } from "@libsql/hrana-client";
import { KeptTransaction, type StreamSession, type StreamTransaction } from "./kept-transaction.js";
import {
  type BatchResult,
  batchFailure,
  clientClosed,
  fromProto,
  type ProtoError,
  protoError,
  StoredSql,
  wholeBatch,
} from "./whole-batch.js";

/** Where a connection sends a transaction whole. */
export interface KeptStream {
  /** Sends `statements` as one write transaction; throws as @libsql/client's `batch(…, "write")` would. */
  writeBatch(statements: readonly InStatement[]): Promise<void>;
  /**
   * A write transaction held on this stream (kept-transaction.ts), or
   * undefined where the stream cannot hold one: the caller then uses the
   * client's own.
   */
  transaction?(): Promise<StreamTransaction | undefined>;
  /** Closes the stream and its socket for good (the connection's close). */
  close(): void;
}

/** The subprotocols offered, newest first: Hrana 3 adds the condition a held transaction needs. */
const PROTOCOLS = ["hrana3", "hrana2"];

/** The requests that name the stream they run on (a stored SQL text belongs to the socket). */
const ON_STREAM: ReadonlySet<string> = new Set(["batch", "sequence"]);

/** The one stream each socket opens. */
const STREAM_ID = 1;

interface Pending {
  resolve(response: unknown): void;
  reject(error: unknown): void;
}

/** The kept stream over WebSocket. */
export class KeptWsStream implements KeptStream {
  readonly #url: string;
  readonly #authToken: string | undefined;
  #socket: WebSocket | undefined;
  /** A socket being opened, shared by the calls that need it meanwhile. */
  #opening: Promise<WebSocket> | undefined;
  /** Requests sent on the current socket and not answered yet, by id. */
  readonly #pending = new Map<number, Pending>();
  #nextRequest = 1;
  /**
   * SQL texts stored on the current socket's stream: a new set with each
   * socket, so that a transaction still holding the last one's cannot mark
   * a text stored on the next.
   */
  #stored = new StoredSql();
  /** Closed with its connection: no socket is opened again. */
  #closed = false;

  constructor(url: string, authToken: string | undefined) {
    this.#url = url;
    this.#authToken = authToken;
  }

  async writeBatch(statements: readonly InStatement[]): Promise<void> {
    const socket = await this.#open();
    const { requests, commit } = wholeBatch(statements, this.#stored);
    // Sent together; the server answers them in order, the batch last.
    const last = (await this.#send(socket, requests)) as { result?: BatchResult };
    const failure = batchFailure(last.result, commit);
    if (failure !== undefined) throw failure;
  }

  /**
   * A transaction on the current socket's stream (opened now if need be);
   * undefined when the server speaks Hrana 2, which cannot keep a statement
   * from running after the server ended the transaction.
   */
  async transaction(): Promise<StreamTransaction | undefined> {
    const socket = await this.#open();
    if (socket.protocol !== "hrana3") return undefined;
    const session: StreamSession = {
      send: (requests) => this.#send(socket, requests),
      stored: this.#stored,
      drop: (reason) => this.#fail(socket, reason),
    };
    return new KeptTransaction(session);
  }

  close(): void {
    this.#closed = true;
    this.#drop(clientClosed());
  }

  /** Sends `requests` together on `socket`; resolves with the last one's response, rejects with the first failure. */
  async #send(socket: WebSocket, requests: readonly unknown[]): Promise<unknown> {
    const outcomes = await Promise.allSettled(
      requests.map((request) => this.#request(socket, request)),
    );
    for (const outcome of outcomes) {
      if (outcome.status === "rejected") throw outcome.reason;
    }
    return (outcomes.at(-1) as PromiseFulfilledResult<unknown>).value;
  }

  /** The current socket, or a new one (its hello sent and its stream opened). */
  #open(): Promise<WebSocket> {
    const socket = this.#socket;
    if (socket !== undefined && socket.readyState === WebSocket.OPEN)
      return Promise.resolve(socket);
    this.#opening ??= this.#connect().finally(() => {
      this.#opening = undefined;
    });
    return this.#opening;
  }

  async #connect(): Promise<WebSocket> {
    if (this.#closed) throw clientClosed();
    const socket = new WebSocket(this.#url, PROTOCOLS);
    await new Promise<void>((resolve, reject) => {
      let failure: unknown;
      socket.once("error", (error: Error) => {
        failure = socketFailure(error);
      });
      socket.once("open", () => resolve());
      socket.once("close", (code: number, reason: Buffer) =>
        reject(failure ?? closedFailure(code, reason)),
      );
    });
    if (this.#closed) {
      socket.close();
      throw clientClosed();
    }
    this.#socket = socket;
    socket.on("message", (data: Buffer) => this.#receive(socket, String(data)));
    socket.on("error", (error: Error) => this.#fail(socket, socketFailure(error)));
    socket.on("close", (code: number, reason: Buffer) =>
      this.#fail(socket, closedFailure(code, reason)),
    );
    socket.send(JSON.stringify({ type: "hello", jwt: this.#authToken ?? null }));
    await this.#request(socket, { type: "open_stream", stream_id: STREAM_ID });
    return socket;
  }

  /** Sends one request on `socket`; resolves with its response, rejects with its error or the socket's. */
  #request(socket: WebSocket, request: unknown): Promise<{ result?: BatchResult }> {
    if (this.#socket !== socket || socket.readyState !== WebSocket.OPEN) {
      return Promise.reject(closedFailure(1006, "the socket closed before the request was sent"));
    }
    const id = this.#nextRequest++;
    const { type } = request as { type: string };
    const body = ON_STREAM.has(type) ? { ...(request as object), stream_id: STREAM_ID } : request;
    return new Promise((resolve, reject) => {
      this.#pending.set(id, { resolve: resolve as (response: unknown) => void, reject });
      socket.send(JSON.stringify({ type: "request", request_id: id, request: body }));
    });
  }

  #receive(socket: WebSocket, text: string): void {
    let message: {
      type?: string;
      request_id?: number;
      response?: unknown;
      error?: ProtoError;
    };
    try {
      message = JSON.parse(text);
    } catch (error) {
      this.#fail(socket, protoError("the server sent a WebSocket message that is not JSON", error));
      socket.close();
      return;
    }
    if (message.type === "hello_ok") return;
    if (message.type === "hello_error") {
      // The token refused: every request of this socket fails with the server's reason.
      this.#fail(socket, fromProto(message.error ?? { message: "hello refused" }));
      socket.close();
      return;
    }
    const pending = this.#pending.get(message.request_id ?? -1);
    if (pending === undefined) return;
    this.#pending.delete(message.request_id as number);
    if (message.type === "response_ok") pending.resolve(message.response);
    else if (message.type === "response_error")
      pending.reject(fromProto(message.error ?? { message: "request failed" }));
    else
      pending.reject(
        protoError(`the server answered a request with a ${String(message.type)} message`),
      );
  }

  /** Fails everything in flight on `socket` with `error`, and lets the next batch open a new socket. */
  #fail(socket: WebSocket, error: unknown): void {
    if (this.#socket === socket) this.#drop(error);
  }

  #drop(error: unknown): void {
    const socket = this.#socket;
    this.#socket = undefined;
    this.#stored = new StoredSql();
    const pending = [...this.#pending.values()];
    this.#pending.clear();
    for (const request of pending) request.reject(error);
    if (socket?.readyState === WebSocket.OPEN) socket.close();
  }
}

/** A socket's own failure, as @libsql/client reports it (a refused handshake says its HTTP status). */
function socketFailure(error: Error): LibsqlError {
  return new LibsqlError(
    `WebSocket failed: ${error.message}`,
    "HRANA_WEBSOCKET_ERROR",
    undefined,
    undefined,
    error,
  );
}

/** A socket the server (or the network) closed, as @libsql/client reports it. */
function closedFailure(code: number, reason: unknown): LibsqlError {
  return new LibsqlError(
    `WebSocket was closed with code ${code}: ${String(reason)}`,
    "HRANA_WEBSOCKET_ERROR",
  );
}
