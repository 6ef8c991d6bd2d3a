/**
 * The `fetch` @libsql/client sends its HTTP requests with, on node:http with
 * kept-alive sockets. The global fetch (undici) costs a remote step more of
 * the client's CPU than the server spends on it (measured against sqld: its
 * dispatcher, web streams, and gzip, which it asks the server for). This one
 * takes the Request the client builds, writes its body on a kept socket,
 * and answers with the little of a Response the client reads: `ok`,
 * `status`, `headers.get`, `json`, `text`, `arrayBuffer`, and `body` as an
 * async iterable of chunks (a Hrana cursor reads it so) with `cancel`.
 * Failures are node:http's own (their `code`: ECONNREFUSED, ECONNRESET…),
 * and a server silent for 300 s fails the request with ETIMEDOUT (undici's
 * fetch waits as long). kept-http-stream.ts sends its requests with `send`.
 */
import http from "node:http";
import https from "node:https";

/** A fetch for one client: its own kept-alive sockets, destroyed by `close`. */
export interface NodeFetch {
  readonly fetch: (request: Request) => Promise<ResponseLike>;
  close(): void;
}

/** What @libsql/hrana-client reads of a response. */
export interface ResponseLike {
  readonly ok: boolean;
  readonly status: number;
  readonly headers: { get(name: string): string | null };
  readonly body: (AsyncIterable<Uint8Array> & { cancel(): Promise<void> }) | null;
  json(): Promise<unknown>;
  text(): Promise<string>;
  arrayBuffer(): Promise<ArrayBuffer>;
}

export function nodeFetch(): NodeFetch {
  const agents = {
    "http:": new http.Agent({ keepAlive: true }),
    "https:": new https.Agent({ keepAlive: true }),
  };
  return {
    async fetch(request) {
      const url = new URL(request.url);
      const secure = url.protocol === "https:";
      if (!secure && url.protocol !== "http:") {
        throw new TypeError(`cannot fetch ${url.protocol} URLs`);
      }
      const body =
        request.method === "GET" || request.method === "HEAD"
          ? undefined
          : new Uint8Array(await request.arrayBuffer());
      const headers: http.OutgoingHttpHeaders = {};
      request.headers.forEach((value, name) => {
        headers[name] = value;
      });
      if (body !== undefined) headers["content-length"] = body.byteLength;
      const answer = await send(url, {
        method: request.method,
        headers,
        body,
        agent: agents[url.protocol as "http:" | "https:"],
      });
      return responseOf(answer);
    },
    close() {
      agents["http:"].destroy();
      agents["https:"].destroy();
    },
  };
}

function responseOf(answer: http.IncomingMessage): ResponseLike {
  const status = answer.statusCode ?? 0;
  let whole: Promise<Buffer> | undefined;
  const read = () => {
    whole ??= readAll(answer);
    return whole;
  };
  return {
    ok: status >= 200 && status < 300,
    status,
    headers: {
      get(name) {
        const value = answer.headers[name.toLowerCase()];
        return value === undefined ? null : Array.isArray(value) ? value.join(", ") : value;
      },
    },
    body: {
      [Symbol.asyncIterator]: () => answer[Symbol.asyncIterator](),
      cancel: async () => {
        answer.destroy();
      },
    },
    json: async () => JSON.parse((await read()).toString("utf8")) as unknown,
    text: async () => (await read()).toString("utf8"),
    arrayBuffer: async () => {
      const bytes = await read();
      return bytes.buffer.slice(
        bytes.byteOffset,
        bytes.byteOffset + bytes.byteLength,
      ) as ArrayBuffer;
    },
  };
}

/** How long a request may wait for the server, as undici's fetch waits for headers and body. */
const ANSWER_TIMEOUT_MS = 300_000;

/**
 * Sends one request on `agent`'s sockets and resolves with the answer's head.
 * A socket silent for ANSWER_TIMEOUT_MS fails the request with ETIMEDOUT.
 */
export function send(
  url: URL,
  options: {
    method: string;
    headers: http.OutgoingHttpHeaders;
    body: Uint8Array | string | undefined;
    agent: http.Agent;
  },
): Promise<http.IncomingMessage> {
  return new Promise((resolve, reject) => {
    const request = (url.protocol === "https:" ? https : http).request(
      url,
      {
        method: options.method,
        headers: options.headers,
        agent: options.agent,
        timeout: ANSWER_TIMEOUT_MS,
      },
      resolve,
    );
    request.on("timeout", () => {
      request.destroy(
        Object.assign(new Error(`the server did not answer within ${ANSWER_TIMEOUT_MS / 1000} s`), {
          code: "ETIMEDOUT",
        }),
      );
    });
    request.on("error", reject);
    request.end(options.body);
  });
}

/** The whole body of an answer. */
export function readAll(answer: http.IncomingMessage): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    answer.on("data", (chunk: Buffer) => chunks.push(chunk));
    answer.on("end", () => resolve(Buffer.concat(chunks)));
    answer.on("error", reject);
  });
}
