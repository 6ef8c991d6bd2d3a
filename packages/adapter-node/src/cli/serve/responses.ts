/**
 * How the server answers: JSON documents, failures as a JSON error with
 * the same stable `code` the CLI prints (and an HTTP status that fits it),
 * and bodies streamed with back-pressure that stop when the browser goes
 * away instead of waiting on it forever.
 */
import type { ServerResponse } from "node:http";
import { describeError, toJson } from "../output.js";

/** The HTTP status of a failure, by its code; anything not listed is the server's fault (500). */
const STATUS: Readonly<Record<string, number>> = {
  not_found: 404,
  route_not_found: 404,
  path_not_found: 404,
  root_not_found: 404,
  method_not_allowed: 405,
  host_not_allowed: 403,
  usage: 400,
  invalid_argument: 400,
  invalid_path: 400,
  root_ambiguous: 400,
  not_a_file: 400,
  not_a_directory: 400,
  // A file the server was asked to show that is no run this build reads.
  not_a_database: 422,
  foreign_database: 422,
  partial_initialization: 422,
  schema_mismatch: 422,
  encoding_mismatch: 422,
  unsupported_version: 422,
  corrupt: 422,
  busy: 503,
  needs_recovery: 503,
};

/** Headers every answer carries: nothing is cached, sniffed, framed or fetched from elsewhere. */
export const COMMON_HEADERS = {
  "cache-control": "no-store",
  "x-content-type-options": "nosniff",
  "x-frame-options": "DENY",
  "referrer-policy": "no-referrer",
  "content-security-policy":
    "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self'; connect-src 'self'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'",
} as const;

export function sendJson(response: ServerResponse, status: number, value: unknown): void {
  const body = Buffer.from(`${toJson(value)}\n`, "utf8");
  response.writeHead(status, {
    ...COMMON_HEADERS,
    "content-type": "application/json; charset=utf-8",
    "content-length": body.length,
  });
  response.end(body);
}

/** A failure as `{ error: { code, message } }`, with the status its code maps to. */
export function sendError(response: ServerResponse, error: unknown): void {
  const { code, message } = describeError(error);
  if (response.headersSent) {
    // A body was already streaming: all that can be said is to cut it short.
    response.destroy();
    return;
  }
  if (code === "method_not_allowed") response.setHeader("allow", "GET, HEAD");
  sendJson(response, STATUS[code] ?? 500, { error: { code, message } });
}

/** The browser went away before the body was sent: the streaming read stops. */
export class ClientGone extends Error {}

/** Writes one piece of a streamed body, waiting while the socket is full; rejects if it closes. */
export function writeBody(response: ServerResponse, chunk: Uint8Array): Promise<void> {
  if (response.destroyed) return Promise.reject(new ClientGone("the client closed the connection"));
  if (response.write(chunk)) return Promise.resolve();
  return new Promise((resolve, reject) => {
    const done = () => {
      response.off("drain", done);
      response.off("close", gone);
      resolve();
    };
    const gone = () => {
      response.off("drain", done);
      response.off("close", gone);
      reject(new ClientGone("the client closed the connection"));
    };
    response.on("drain", done);
    response.on("close", gone);
  });
}
