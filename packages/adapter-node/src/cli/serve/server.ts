/**
 * The HTTP server of `runledger serve`: GET (and HEAD) only, the page's
 * files and the JSON routes, every failure a JSON error with a stable code.
 * Bound to a loopback address, it answers only requests addressed to one
 * (the Host header), so a web page elsewhere cannot reach the runs through
 * a name that resolves to 127.0.0.1.
 */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { RunledgerError } from "@runledger/core";
import { type Asset, loadAssets } from "./assets.js";
import { ClientGone, COMMON_HEADERS, sendError } from "./responses.js";
import { ROUTES } from "./routes.js";
import type { RunSource } from "./sources.js";

export interface Served {
  readonly url: string;
  readonly host: string;
  readonly port: number;
  /** Stops accepting requests and ends the open connections. */
  close(): Promise<void>;
}

/** Whether `host` is a loopback address (the server then checks each request's Host). */
export function isLoopback(host: string): boolean {
  return host === "localhost" || host === "::1" || /^127(\.\d{1,3}){3}$/.test(host);
}

/** The Host header's name, without its port ("[::1]:80" → "::1"). */
function hostName(header: string | undefined): string {
  if (header === undefined) return "";
  const bracketed = /^\[([^\]]*)\](:\d+)?$/.exec(header);
  if (bracketed !== null) return bracketed[1]!;
  return header.replace(/:\d+$/, "");
}

function refuseUnless(request: IncomingMessage, loopback: boolean): void {
  if (request.method !== "GET" && request.method !== "HEAD") {
    throw new RunledgerError(
      "method_not_allowed",
      `runledger serve only reads: ${request.method ?? "this method"} is not allowed, GET is`,
    );
  }
  if (loopback && !isLoopback(hostName(request.headers.host))) {
    throw new RunledgerError(
      "host_not_allowed",
      `this server answers requests for 127.0.0.1 or localhost only, not ${JSON.stringify(request.headers.host ?? "")}`,
    );
  }
}

function sendAsset(response: ServerResponse, asset: Asset): void {
  response.writeHead(200, {
    ...COMMON_HEADERS,
    "content-type": asset.type,
    "content-length": asset.body.length,
  });
  response.end(asset.body);
}

async function answer(
  request: IncomingMessage,
  response: ServerResponse,
  context: { source: RunSource; assets: Map<string, Asset>; loopback: boolean },
): Promise<void> {
  refuseUnless(request, context.loopback);
  const url = new URL(request.url ?? "/", "http://runledger.invalid");
  const asset = context.assets.get(url.pathname);
  if (asset !== undefined) return sendAsset(response, asset);
  const route = ROUTES[url.pathname];
  if (route === undefined) {
    throw new RunledgerError(
      "route_not_found",
      `runledger serve has no ${JSON.stringify(url.pathname)}: the page is at /, its data under /api/`,
      { details: { path: url.pathname } },
    );
  }
  await route({ query: url.searchParams, source: context.source, response });
}

/** Why the server could not listen, as a failure with a code an operator can act on. */
function listenFailure(error: NodeJS.ErrnoException, host: string, port: number): unknown {
  switch (error.code) {
    case "EADDRINUSE":
      return new RunledgerError(
        "address_in_use",
        `port ${port} on ${host} is taken by another program: pass --port with another number, or --port 0 for any free one`,
        { cause: error, details: { host, port } },
      );
    case "EACCES":
      return new RunledgerError(
        "permission_denied",
        `this user may not listen on port ${port}: pass --port 1024 or above, or --port 0`,
        { cause: error, details: { host, port } },
      );
    case "EADDRNOTAVAIL":
    case "ENOTFOUND":
    case "EAI_AGAIN":
      return new RunledgerError(
        "usage",
        `--host ${host} is not an address of this machine; leave it out for 127.0.0.1`,
        { cause: error, details: { host } },
      );
    default:
      return error;
  }
}

function listen(server: Server, host: string, port: number): Promise<AddressInfo> {
  return new Promise((resolve, reject) => {
    const failed = (error: NodeJS.ErrnoException) => reject(listenFailure(error, host, port));
    server.once("error", failed);
    server.listen({ host, port }, () => {
      server.off("error", failed);
      resolve(server.address() as AddressInfo);
    });
  });
}

/** Starts serving `source` on host:port (0: a free port); resolves once it listens. */
export async function startServer(
  source: RunSource,
  options: { host: string; port: number },
): Promise<Served> {
  const context = { source, assets: await loadAssets(), loopback: isLoopback(options.host) };
  const server = createServer((request, response) => {
    answer(request, response, context).catch((error: unknown) => {
      if (error instanceof ClientGone) return;
      sendError(response, error);
    });
  });
  const address = await listen(server, options.host, options.port);
  const shown = address.family === "IPv6" ? `[${address.address}]` : address.address;
  return {
    url: `http://${shown}:${address.port}/`,
    host: address.address,
    port: address.port,
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}
