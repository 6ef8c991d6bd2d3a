/**
 * Everything the families share: the driver, fresh locations, connections
 * closed when their test ends, scratch directories removed when the suite
 * ends, the expectations every translated error must meet, and the second
 * process that holds a write lock.
 */
import { type ChildProcessWithoutNullStreams, spawn } from "node:child_process";
import { existsSync } from "node:fs";
import { mkdtemp, realpath, rm } from "node:fs/promises";
import { dirname, join } from "node:path";
import { createInterface } from "node:readline";
import { fileURLToPath } from "node:url";
import {
  type Driver,
  type DriverConnection,
  type OpenOptions,
  RunledgerError,
} from "@runledger/core";
import { afterAll, expect, onTestFinished } from "vitest";
import type { HolderCommand, HolderMessage, HolderRequest } from "./child/protocol.js";
import type { ConformanceSubject } from "./subject.js";

/** Busy timeout for connections whose test is not about contention. */
const DEFAULT_BUSY_TIMEOUT_MS = 2_000;
/** How long the lock holder may take to start, open and lock. */
const HOLDER_START_MS = 30_000;

export interface Fixtures {
  readonly subject: ConformanceSubject;
  /** Locations are local files (capabilities.files). */
  readonly files: boolean;
  /** The subject's driver, built once per suite. */
  driver(): Driver;
  /** A fresh location that names no database yet. */
  location(): string;
  /** Opens a connection (writable and creating by default), closed when the current test ends. */
  open(location: string, options?: Partial<OpenOptions>): Promise<DriverConnection>;
  /** A new database holding what `script` creates, at a fresh location; the connection is closed. */
  database(script: string): Promise<string>;
  /** A new, empty, symlink-free directory beside the subject's locations, removed after the suite. */
  scratchDirectory(): Promise<string>;
  /** Starts a second process that holds BEGIN IMMEDIATE on `location` (killed when the test ends). */
  holdWriteLock(location: string, statements?: readonly string[]): Promise<LockHolder>;
}

export interface LockHolder {
  /** Tells the other process to commit (or roll back) and waits until it has let go and exited. */
  release(command?: HolderCommand): Promise<void>;
}

/** Must be called while a describe block is being collected: it registers the suite's cleanup. */
export function createFixtures(subject: ConformanceSubject): Fixtures {
  let driver: Driver | undefined;
  const scratch: string[] = [];
  afterAll(async () => {
    await Promise.all(scratch.map((dir) => rm(dir, { recursive: true, force: true })));
  });

  const fixtures: Fixtures = {
    subject,
    files: subject.capabilities?.files === true,
    driver: () => {
      driver ??= subject.driver();
      return driver;
    },
    location: () => subject.location(),
    async open(location, options = {}) {
      const connection = await fixtures.driver().open(location, {
        create: true,
        readOnly: false,
        busyTimeoutMs: DEFAULT_BUSY_TIMEOUT_MS,
        ...options,
      });
      onTestFinished(() => connection.close());
      return connection;
    },
    async database(script) {
      const location = fixtures.location();
      const connection = await fixtures.open(location);
      await connection.executeScript(script);
      await connection.close();
      return location;
    },
    async scratchDirectory() {
      const dir = await realpath(await mkdtemp(join(dirname(subject.location()), "scratch-")));
      scratch.push(dir);
      return dir;
    },
    holdWriteLock: (location, statements = []) => startHolder(subject, location, statements),
  };
  return fixtures;
}

/** Runs `action`, which must fail with a RunledgerError, and returns that error. */
export async function failureOf(action: () => Promise<unknown>): Promise<RunledgerError> {
  try {
    await action();
  } catch (error) {
    expect(error, "the failure must be a RunledgerError").toBeInstanceOf(RunledgerError);
    return error as RunledgerError;
  }
  return expect.fail("expected the operation to fail, but it succeeded");
}

export interface ExpectedFailure {
  readonly code: string;
  readonly sqliteCode: string;
  /** False for refusals the port decides before the driver is called (no driver error to keep). */
  readonly hasCause?: boolean;
  /** Something the message must mention. */
  readonly mentions?: RegExp;
}

/** The shape every translated failure has: stable code, SQLite codes, a message, the cause. */
export function expectTranslated(error: RunledgerError, expected: ExpectedFailure): void {
  expect(error.code).toBe(expected.code);
  expect(error.sqliteCode).toBe(expected.sqliteCode);
  expect(error.sqlitePrimaryCode).toBe(expected.sqliteCode.split("_").slice(0, 2).join("_"));
  expect(error.message.trim()).not.toBe("");
  if (expected.mentions !== undefined) expect(error.message).toMatch(expected.mentions);
  if (expected.hasCause === false) {
    expect(error.cause).toBeUndefined();
  } else {
    expect(error.cause, "the driver's own error is kept as cause").toBeInstanceOf(Error);
    expect(error.cause).not.toBeInstanceOf(RunledgerError);
  }
}

/** Byte-for-byte equality without building a diff of megabytes. */
export function sameBytes(a: Uint8Array, b: Uint8Array): boolean {
  if (a.byteLength !== b.byteLength) return false;
  for (let i = 0; i < a.byteLength; i++) if (a[i] !== b[i]) return false;
  return true;
}

/** The holder script, built to dist/child/holder.js beside this module's bundle. */
function holderScript(): string {
  const path = fileURLToPath(new URL("./child/holder.js", import.meta.url));
  if (!existsSync(path)) {
    throw new Error(`the lock holder script is missing at ${path}: build @runledger/conformance`);
  }
  return path;
}

async function startHolder(
  subject: ConformanceSubject,
  location: string,
  statements: readonly string[],
): Promise<LockHolder> {
  const child = subject.child;
  if (child === undefined) throw new Error("this family needs subject.child to start a process");
  const request: HolderRequest = {
    module: child.module,
    exportName: child.exportName,
    location,
    statements,
  };
  const holder = new HolderProcess(
    spawn(process.execPath, [holderScript(), JSON.stringify(request)], {
      stdio: ["pipe", "pipe", "pipe"],
    }),
  );
  onTestFinished(() => holder.kill());
  await holder.waitFor("holding", HOLDER_START_MS);
  return {
    async release(command = "commit") {
      holder.send(command);
      await holder.waitFor("released", HOLDER_START_MS);
      await holder.exited;
    },
  };
}

/** The suite's side of the holder protocol: JSON lines in, words out. */
class HolderProcess {
  readonly exited: Promise<number | null>;
  readonly #process: ChildProcessWithoutNullStreams;
  readonly #messages: HolderMessage[] = [];
  #stderr = "";
  #wake: () => void = () => {};

  constructor(child: ChildProcessWithoutNullStreams) {
    this.#process = child;
    child.stdin.on("error", () => {}); // the holder may already be gone
    child.stderr.setEncoding("utf8").on("data", (text: string) => {
      this.#stderr += text;
    });
    createInterface({ input: child.stdout }).on("line", (line) => {
      try {
        this.#messages.push(JSON.parse(line) as HolderMessage);
      } catch {
        this.#stderr += `${line}\n`;
      }
      this.#wake();
    });
    this.exited = new Promise((resolve) => {
      child.on("exit", (code) => {
        resolve(code);
        this.#wake();
      });
    });
  }

  send(command: HolderCommand): void {
    this.#process.stdin.write(`${command}\n`);
  }

  async waitFor(state: HolderMessage["state"], timeoutMs: number): Promise<void> {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      const message = this.#messages.shift();
      if (message?.state === state) return;
      if (message?.state === "failed") {
        throw new Error(
          `the lock holder failed (${message.code ?? "no code"}): ${message.message}${this.#details()}`,
        );
      }
      if (message !== undefined) continue;
      if (this.#process.exitCode !== null || this.#process.signalCode !== null) {
        throw new Error(`the lock holder exited before "${state}"${this.#details()}`);
      }
      const left = deadline - Date.now();
      if (left <= 0) throw new Error(`the lock holder did not report "${state}"${this.#details()}`);
      await new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, left);
        this.#wake = () => {
          clearTimeout(timer);
          resolve();
        };
      });
    }
  }

  async kill(): Promise<void> {
    if (this.#process.exitCode === null && this.#process.signalCode === null) {
      this.#process.kill();
      await this.exited;
    }
  }

  #details(): string {
    return this.#stderr === "" ? "" : `\n--- holder stderr ---\n${this.#stderr}`;
  }
}
