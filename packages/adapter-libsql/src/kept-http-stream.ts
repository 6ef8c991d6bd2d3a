/**
 * The kept stream over HTTP, spoken directly: Hrana's pipeline requests
 * (version 3, JSON) on one kept-alive socket of node:http. Over HTTP a step
 * is one request either way, and the client's cost of it is what remains:
 * @libsql/client and @libsql/hrana-client build a WHATWG Request, send it
 * through undici's fetch, and read the answer through web streams and gzip.
 * Measured on sqld, one optimistic step a request: about 3.7 ms of the
 * client process's CPU a step that way (most of it fetch, its streams and
 * zlib), against sqld's 1.3 ms for the same step. Here a request is one
 * JSON text written to a socket kept open, and its answer one JSON text read
 * back, uncompressed.
 *
 * What the protocol asks, and this keeps:
 * - A stream is named by the baton of the server's last answer; each request
 *   carries it, and the next one carries the new one (so requests go one at a
 *   time). An answer may name another URL for the stream's next requests.
 * - A stream left idle expires (sqld: about 10 s), and a server that
 *   restarted knows none of the batons it gave before; either way it refuses
 *   the next request before running any of it, and that request is sent once
 *   more, on a new stream. Any failure drops the baton (closing the stream
 *   on the server when it still has one), and the next request opens a new
 *   stream.
 * - SQL texts stored on a stream are named by id in its later requests, and
 *   forgotten with it.
 * - An ordinary write transaction is held on the stream too
 *   (kept-transaction.ts says why), its requests in turn with the others.
 *
 * Failures are shaped as @libsql/client's (a LibsqlError with the server's
 * code; `statementIndex` for a statement's; an HTTP status on its cause), and
 * a socket's own failure is thrown as node:http gives it (its `code`:
 * ECONNREFUSED, ECONNRESET…), so the adapter's translation reads both as it
 * reads the client's.
 */
import http from "node:http";
import https from "node:https";
import { type InStatement, LibsqlError } from "@libsql/client";
import type { KeptStream } from "./kept-stream.js";
import { KeptTransaction, type StreamSession, type StreamTransaction } from "./kept-transaction.js";
import { readAll, send } from "./node-fetch.js";
import { isUnknownBaton } from "./remote-errors.js";
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

/**
 * A stream's requests go to the pipeline of the newest Hrana version the
 * server speaks over HTTP: 3 (version 2's requests, plus the condition a held
 * transaction needs) where it answers `GET v3`, as @libsql/hrana-client
 * asks, else 2 (and no transaction is held: the client's own are used).
 */
const PIPELINE = { 2: "v2/pipeline", 3: "v3/pipeline" } as const;

export class KeptHttpStream implements KeptStream {
  readonly #url: URL;
  readonly #authorization: string | undefined;
  readonly #agent: http.Agent;
  /** Where the stream's next request goes (the server may move it). */
  #pipelineUrl: URL;
  /** The stream's name in the server's last answer; null when no stream is open. */
  #baton: string | null = null;
  /** SQL texts stored on the current stream. */
  readonly #stored = new StoredSql();
  /** Counts the streams given up: a held transaction's requests go only to the stream it began on. */
  #generation = 0;
  /** The Hrana version the server speaks over HTTP, asked once, before the first request. */
  #version: Promise<2 | 3> | undefined;
  #pipelinePath: string = PIPELINE[3];
  /** The request in flight: the next one waits for it (a stream takes one at a time). */
  #last: Promise<unknown> = Promise.resolve();
  #closed = false;

  constructor(url: string, authToken: string | undefined) {
    this.#url = new URL(url.endsWith("/") ? url : `${url}/`);
    this.#pipelineUrl = new URL(this.#pipelinePath, this.#url);
    this.#authorization = authToken === undefined ? undefined : `Bearer ${authToken}`;
    this.#agent =
      this.#url.protocol === "https:"
        ? new https.Agent({ keepAlive: true, maxSockets: 1 })
        : new http.Agent({ keepAlive: true, maxSockets: 1 });
  }

  writeBatch(statements: readonly InStatement[]): Promise<void> {
    return this.#inTurn(async () => {
      await this.#protocol();
      await this.#resent(() => this.#send(statements));
    });
  }

  /** Runs `work` once the stream's request in flight has finished (it takes one at a time). */
  #inTurn<T>(work: () => Promise<T>): Promise<T> {
    const sending = this.#last.then(() => {
      if (this.#closed) throw clientClosed();
      return work();
    });
    this.#last = sending.catch(() => undefined);
    return sending;
  }

  /**
   * `attempt`, and once more on a new stream when the server refused the
   * stream it resumed before running any of it (expired, or unknown since a
   * restart).
   */
  async #resent<T>(attempt: () => Promise<T>): Promise<T> {
    const resumed = this.#baton !== null;
    try {
      return await attempt();
    } catch (error) {
      if (!(resumed && streamRefused(error))) throw error;
      return attempt();
    }
  }

  /** Closes the stream on the server (not waited for) and the socket. */
  close(): void {
    if (this.#closed) return;
    this.#closed = true;
    const baton = this.#baton;
    this.#forget();
    if (baton === null) {
      this.#agent.destroy();
      return;
    }
    this.#post(JSON.stringify({ baton, requests: [{ type: "close" }] }))
      .catch(() => undefined)
      .finally(() => this.#agent.destroy());
  }

  /**
   * A write transaction held on this stream (kept-transaction.ts): its
   * requests wait their turn with the stream's others, and go only to the
   * stream its first request reached. That first one is sent once more on a
   * new stream when the server refused the stream before running any of it,
   * as a whole batch is; so its SQL texts go inline, never by an id stored
   * on a stream it may not reach.
   */
  async transaction(): Promise<StreamTransaction | undefined> {
    if (this.#closed) throw clientClosed();
    if ((await this.#protocol()) !== 3) return undefined;
    let stream: number | undefined;
    const session: StreamSession = {
      send: (requests) =>
        this.#inTurn(async () => {
          if (stream === undefined) {
            const response = await this.#resent(() => this.#pipeline(requests));
            stream = this.#generation;
            return response;
          }
          if (stream !== this.#generation) throw streamGone();
          return this.#pipeline(requests);
        }),
      stored: INLINE,
      drop: () => {
        if (stream === this.#generation) this.#giveUp();
      },
    };
    return new KeptTransaction(session);
  }

  /** One attempt: the transaction as one batch, with the SQL texts it stores first. */
  async #send(statements: readonly InStatement[]): Promise<void> {
    const { requests, commit } = wholeBatch(statements, this.#stored);
    const last = (await this.#pipeline(requests)) as { result?: BatchResult } | undefined;
    const failure = batchFailure(last?.result, commit);
    if (failure !== undefined) throw failure;
  }

  /** Sends `requests` on the stream in one pipeline request; resolves with the last one's response. */
  async #pipeline(requests: readonly unknown[]): Promise<unknown> {
    let answer: PipelineAnswer;
    try {
      answer = await this.#post(JSON.stringify({ baton: this.#baton, requests }));
    } catch (error) {
      // What the server did with the requests is not known here: the stream is given up.
      this.#forget();
      throw error;
    }
    this.#baton = answer.baton ?? null;
    if (typeof answer.base_url === "string") {
      this.#pipelineUrl = new URL(this.#pipelinePath, new URL(answer.base_url, this.#url));
    }
    const results = answer.results ?? [];
    for (const result of results.slice(0, -1)) {
      if (result.type !== "ok") throw this.#lost(failureOf(result));
    }
    const last = results.at(-1);
    if (last?.type !== "ok" || results.length !== requests.length) {
      throw this.#lost(failureOf(last));
    }
    return last.response;
  }

  /** The server's Hrana version over HTTP (see PIPELINE), asked once; a failed asking is asked again. */
  #protocol(): Promise<2 | 3> {
    this.#version ??= this.#askVersion().then(
      (version) => {
        this.#pipelinePath = PIPELINE[version];
        if (this.#baton === null) this.#pipelineUrl = new URL(this.#pipelinePath, this.#url);
        return version;
      },
      (error: unknown) => {
        this.#version = undefined;
        throw error;
      },
    );
    return this.#version;
  }

  async #askVersion(): Promise<2 | 3> {
    const headers: http.OutgoingHttpHeaders = {};
    if (this.#authorization !== undefined) headers.authorization = this.#authorization;
    const answer = await send(new URL("v3", this.#url), {
      method: "GET",
      headers,
      body: undefined,
      agent: this.#agent,
    });
    await readAll(answer);
    const status = answer.statusCode ?? 0;
    return status >= 200 && status < 300 ? 3 : 2;
  }

  /** Ends the current stream on the server (not waited for): what it held is rolled back there. */
  #giveUp(): void {
    const baton = this.#baton;
    this.#forget();
    if (baton === null) return;
    this.#post(JSON.stringify({ baton, requests: [{ type: "close" }] })).catch(() => undefined);
  }

  /**
   * Gives up the stream after `error` (the next request opens a new one),
   * closing it on the server, which rolls back what it held; returns `error`.
   */
  #lost(error: unknown): unknown {
    this.#giveUp();
    return error;
  }

  #forget(): void {
    this.#generation++;
    this.#baton = null;
    this.#pipelineUrl = new URL(this.#pipelinePath, this.#url);
    this.#stored.clear();
  }

  /** POSTs `body` to the stream's URL; resolves with the answer's JSON, rejects as the client would. */
  async #post(body: string): Promise<PipelineAnswer> {
    const headers: http.OutgoingHttpHeaders = {
      "content-type": "application/json",
      "content-length": Buffer.byteLength(body),
    };
    if (this.#authorization !== undefined) headers.authorization = this.#authorization;
    const answer = await send(this.#pipelineUrl, {
      method: "POST",
      headers,
      body,
      agent: this.#agent,
    });
    const text = (await readAll(answer)).toString("utf8");
    const status = answer.statusCode ?? 0;
    if (status !== 200) throw statusError(status, answer.headers, text);
    try {
      return JSON.parse(text) as PipelineAnswer;
    } catch (error) {
      throw protoError("the server's answer is not JSON", error);
    }
  }
}

/** A held transaction's texts are sent inline (see `transaction`). */
const INLINE = new StoredSql(0);

/** A held transaction whose stream was given up after a failure: the server rolls it back. */
function streamGone(): LibsqlError {
  return new LibsqlError(
    "the stream this transaction was held on was closed after a failure; the server rolled it back",
    "TRANSACTION_CLOSED",
  );
}

/** The server refused a request for its stream (expired, or unknown since it restarted), having run none of it. */
function streamRefused(error: unknown): boolean {
  return error instanceof LibsqlError && (error.code === "STREAM_EXPIRED" || isUnknownBaton(error));
}

/** The parts of a pipeline answer read here (Hrana 3, JSON). */
interface PipelineAnswer {
  baton?: string | null;
  base_url?: string | null;
  results?: Array<
    { type: "ok"; response?: unknown } | { type: "error"; error: ProtoError } | { type: "none" }
  >;
}

type PipelineResult = NonNullable<PipelineAnswer["results"]>[number];

/** A request's failure in the server's answer (or the answer's own, when it has no such request). */
function failureOf(result: PipelineResult | undefined): LibsqlError {
  return result?.type === "error"
    ? fromProto(result.error)
    : protoError("the server answered a pipeline in a form this client does not know");
}

/** An answer other than 200: the server's own error when it sent one, else the status with its text. */
function statusError(status: number, headers: http.IncomingHttpHeaders, text: string): LibsqlError {
  if (headers["content-type"] === "application/json") {
    let proto: Partial<ProtoError> | undefined;
    try {
      proto = JSON.parse(text) as Partial<ProtoError>;
    } catch (error) {
      return protoError(
        `the server answered HTTP status ${status} with JSON that does not parse`,
        error,
      );
    }
    if (typeof proto?.message === "string") return fromProto(proto as ProtoError);
  }
  const body = text.trim();
  const message = `Server returned HTTP status ${status}${body === "" ? "" : `: ${body}`}`;
  return new LibsqlError(
    message,
    "SERVER_ERROR",
    undefined,
    undefined,
    Object.assign(new Error(message), { status }),
  );
}
