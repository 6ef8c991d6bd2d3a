/**
 * A private npm registry for the release test: Verdaccio (the version pinned in
 * the root package.json), started as a child process on 127.0.0.1 and a free
 * port, with its storage and users in a temp directory and no uplink, so it
 * serves only what the test publishes to it. `stop()` ends it.
 */
import { type ChildProcess, spawn } from "node:child_process";
import { writeFileSync } from "node:fs";
import { createRequire } from "node:module";
import { createServer } from "node:net";
import { join } from "node:path";

export interface Registry {
  /** `http://127.0.0.1:PORT/` */
  readonly url: string;
  /** The `//127.0.0.1:PORT/` prefix npm keys a registry's token by. */
  readonly authKey: string;
  /** A token for a fresh user who may publish. */
  token(): Promise<string>;
  stop(): Promise<void>;
}

function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.on("error", reject);
    server.listen(0, "127.0.0.1", () => {
      const address = server.address();
      server.close(() =>
        typeof address === "object" && address !== null
          ? resolve(address.port)
          : reject(new Error("no port")),
      );
    });
  });
}

function config(dir: string): string {
  return [
    `storage: ${JSON.stringify(join(dir, "storage"))}`,
    "auth:",
    "  htpasswd:",
    `    file: ${JSON.stringify(join(dir, "htpasswd"))}`,
    "    max_users: 10",
    "uplinks: {}",
    "packages:",
    "  '**':",
    "    access: $all",
    "    publish: $authenticated",
    "    unpublish: $authenticated",
    "middlewares:",
    "  audit:",
    "    enabled: false",
    "web:",
    "  enable: false",
    "log: { type: stdout, format: pretty, level: warn }",
    "",
  ].join("\n");
}

async function waitUntilUp(url: string, child: ChildProcess, log: () => string): Promise<void> {
  const deadline = Date.now() + 60_000;
  while (Date.now() < deadline) {
    if (child.exitCode !== null) throw new Error(`verdaccio exited ${child.exitCode}\n${log()}`);
    try {
      const response = await fetch(`${url}-/ping`);
      if (response.ok) return;
    } catch {
      // not listening yet
    }
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
  throw new Error(`verdaccio did not answer on ${url} within 60 s\n${log()}`);
}

export async function startRegistry(dir: string): Promise<Registry> {
  const configFile = join(dir, "verdaccio.yaml");
  writeFileSync(configFile, config(dir));
  const port = await freePort();
  const url = `http://127.0.0.1:${port}/`;
  const bin = createRequire(import.meta.url).resolve("verdaccio/bin/verdaccio");
  const child = spawn(
    process.execPath,
    [bin, "--config", configFile, "--listen", `127.0.0.1:${port}`],
    {
      stdio: ["ignore", "pipe", "pipe"],
    },
  );
  let output = "";
  child.stdout?.setEncoding("utf8").on("data", (chunk: string) => (output += chunk));
  child.stderr?.setEncoding("utf8").on("data", (chunk: string) => (output += chunk));
  const stop = () =>
    new Promise<void>((resolve) => {
      if (child.exitCode !== null || child.signalCode !== null) return resolve();
      child.once("exit", () => resolve());
      child.kill("SIGTERM");
    });
  try {
    await waitUntilUp(url, child, () => output);
  } catch (error) {
    await stop();
    throw error;
  }
  let users = 0;
  return {
    url,
    authKey: `//127.0.0.1:${port}/`,
    async token() {
      const name = `release-test-${++users}`;
      const response = await fetch(`${url}-/user/org.couchdb.user:${name}`, {
        method: "PUT",
        headers: { "content-type": "application/json" },
        body: JSON.stringify({ name, password: `pw-${name}-${port}` }),
      });
      const body = (await response.json()) as { token?: string };
      if (!response.ok || typeof body.token !== "string") {
        throw new Error(
          `verdaccio refused to add user ${name}: ${response.status} ${JSON.stringify(body)}`,
        );
      }
      return body.token;
    },
    stop,
  };
}
