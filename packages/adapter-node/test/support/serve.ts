/**
 * `runledger serve` as the tests run it: the built CLI in a child process,
 * on a free port, its URL read from the line it prints once it listens;
 * stopped with SIGTERM and awaited. Also what the "never writes" checks
 * compare: every file of a directory, by name and content hash.
 */
import { type ChildProcess, spawn, spawnSync } from "node:child_process";
import { createHash } from "node:crypto";
import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { expect } from "vitest";

const packageDir = fileURLToPath(new URL("../..", import.meta.url));
export const bin = join(packageDir, "bin", "runledger.js");
/** How long a server may take to start on a loaded machine. */
const START_DEADLINE_MS = 60_000;
export const DETERMINISTIC = { RUNLEDGER_DEMO_CLOCK: "fixed", RUNLEDGER_DEMO_IDS: "sequential" };

export interface Serving {
  readonly url: string;
  readonly child: ChildProcess;
  /** What the server wrote to stdout and stderr so far. */
  stdout(): string;
  stderr(): string;
  /** Sends SIGTERM and resolves to the exit code. */
  stop(): Promise<number | null>;
}

/** Starts `runledger serve ARGS --port 0` (unless a port is given) and waits for the URL it prints. */
export function startServe(args: string[]): Promise<Serving> {
  const port = args.includes("--port") ? [] : ["--port", "0"];
  const child = spawn(process.execPath, [bin, "serve", ...args, ...port], {
    stdio: ["ignore", "pipe", "pipe"],
  });
  let stdout = "";
  let stderr = "";
  child.stderr!.setEncoding("utf8").on("data", (chunk: string) => (stderr += chunk));
  const exited = new Promise<number | null>((resolve) => child.on("exit", (code) => resolve(code)));
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => {
      child.kill("SIGKILL");
      reject(new Error(`runledger serve printed no URL in ${START_DEADLINE_MS} ms: ${stderr}`));
    }, START_DEADLINE_MS);
    exited.then((code) => {
      clearTimeout(timer);
      reject(new Error(`runledger serve exited ${code} before listening: ${stderr}`));
    });
    child.stdout!.setEncoding("utf8").on("data", (chunk: string) => {
      stdout += chunk;
      // The plain line, or the url member of the --json document.
      const url = /^runledger serve: (http:\/\/\S+)$|"url": "(http:\/\/[^"]+)"/m.exec(stdout);
      if (url === null) return;
      clearTimeout(timer);
      resolve({
        url: (url[1] ?? url[2])!,
        child,
        stdout: () => stdout,
        stderr: () => stderr,
        stop: () => {
          if (child.exitCode === null) child.kill("SIGTERM");
          return exited;
        },
      });
    });
  });
}

/** Runs the CLI to completion (a demo, a failing serve), with its output. */
/** Runs `fn` against a server started with `args`, stopping it afterwards (exit 0 expected). */
export async function serving(
  args: string[],
  fn: (server: Serving) => Promise<void>,
): Promise<void> {
  const server = await startServe(args);
  try {
    await fn(server);
  } finally {
    expect(await server.stop(), server.stderr()).toBe(0);
  }
}

export function runledger(args: string[], env: Record<string, string> = {}) {
  const result = spawnSync(process.execPath, [bin, ...args], {
    env: { ...process.env, ...env },
    encoding: "utf8",
    timeout: START_DEADLINE_MS,
  });
  return { code: result.status, stdout: result.stdout, stderr: result.stderr };
}

/** Every entry of a directory with its content's hash: equal before and after means nothing was written. */
export function snapshot(directory: string): Record<string, string> {
  const entries: Record<string, string> = {};
  for (const name of readdirSync(directory).sort()) {
    entries[name] = createHash("sha256")
      .update(readFileSync(join(directory, name)))
      .digest("hex");
  }
  return entries;
}
