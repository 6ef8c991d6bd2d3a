/**
 * Everything the families share: the driver, fresh locations, connections
 * closed when their test ends, scratch directories removed when the suite
 * ends, the expectations every translated error must meet, the second
 * process that holds a write lock, and the suite's side of every child script.
 */
import { type ChildProcess as NodeChildProcess, spawn } from "node:child_process";
import { createHash } from "node:crypto";
import { existsSync } from "node:fs";
import { mkdtemp, realpath, rm } from "node:fs/promises";
import { dirname, join } from "node:path";
import { createInterface } from "node:readline";
import { fileURLToPath } from "node:url";
import { RunledgerError } from "@runledger/core";
import type { Driver, DriverConnection, OpenOptions } from "@runledger/core/port";
import { afterAll, expect, onTestFinished } from "vitest";
import type { DriverSource, FailedMessage } from "./child/common.js";
import type { HolderCommand, HolderMessage, HolderRequest } from "./child/protocol.js";
import { type Gated, meets, type Need, needs } from "./requirements.js";
import { resolveDriverModule } from "./resolve.js";
import type { ConformanceChild, ConformancePeer, ConformanceSubject } from "./subject.js";

/** Busy timeout for connections whose test is not about contention. */
const DEFAULT_BUSY_TIMEOUT_MS = 2_000;
/** How long the lock holder may take to start, open and lock. */
const HOLDER_START_MS = 30_000;

export interface Fixtures {
  /** The subject, its `child` and `peers` modules resolved from `subject.root` when first used. */
  readonly subject: ConformanceSubject;
  /** Locations are local files (capabilities.files). */
  readonly files: boolean;
  /** Whether the subject meets `need`. */
  has(need: Need): boolean;
  /** `it`/`describe` for tests that need all of `needed`: skipped with the reason when one is missing. */
  needs(...needed: Need[]): Gated;
  /**
   * The subject's peers to register cross-adapter tests for; without any, one
   * stand-in ("another adapter") so those tests are still registered, and
   * skipped by their need "peers".
   */
  readonly peers: readonly ConformancePeer[];
  /** Locations are databases on a server (capabilities.remote). */
  readonly remote: boolean;
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
  /**
   * Starts a second process that holds BEGIN IMMEDIATE on `location` (killed
   * when the test ends), built with the subject's driver or with `by`'s (a peer).
   */
  holdWriteLock(
    location: string,
    statements?: readonly string[],
    by?: ConformanceChild,
  ): Promise<LockHolder>;
}

export interface LockHolder {
  /** Tells the other process to commit (or roll back) and waits until it has let go and exited. */
  release(command?: HolderCommand): Promise<void>;
  /** Kills the process with SIGKILL while it holds the lock (no rollback, no close) and waits for it to die. */
  crash(): Promise<void>;
}

/** Must be called while a describe block is being collected: it registers the suite's cleanup. */
export function createFixtures(given: ConformanceSubject): Fixtures {
  if (given.capabilities?.childProcesses === true && given.child === undefined) {
    throw new Error(
      `${given.name} declares capabilities.childProcesses but gives no subject.child ` +
        "(the module and export a child process builds the driver from)",
    );
  }
  const subject: ConformanceSubject = {
    ...given,
    ...(given.child === undefined ? {} : { child: resolvedLater(given.child, given.root) }),
    ...(given.peers === undefined
      ? {}
      : { peers: given.peers.map((peer) => resolvedLater<ConformancePeer>(peer, given.root)) }),
  };
  let driver: Driver | undefined;
  const scratch: string[] = [];
  afterAll(async () => {
    await Promise.all(scratch.map((dir) => rm(dir, { recursive: true, force: true })));
  });

  const fixtures: Fixtures = {
    subject,
    files: meets(subject, "files"),
    has: (need) => meets(subject, need),
    needs: (...needed) => needs(subject, ...needed),
    peers: subject.peers !== undefined && subject.peers.length > 0 ? subject.peers : [STAND_IN],
    remote: subject.capabilities?.remote === true,
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
    holdWriteLock: (location, statements = [], by) =>
      startHolder(by ?? subjectChild(subject), location, statements),
  };
  return fixtures;
}

/** Names the skipped cross-adapter tests of a subject without peers; never started. */
const STAND_IN: ConformancePeer = {
  name: "another adapter",
  module: "(no peer: subject.peers is empty)",
  exportName: "none",
};

/**
 * `child` with its `module` resolved from the subject's package on first
 * read (a test reads it; collecting the suite never does, so an unresolvable
 * module fails the tests that need it, with the reason, not the whole file).
 */
function resolvedLater<T extends ConformanceChild>(child: T, root: string | URL | undefined): T {
  let resolved: string | undefined;
  const copy = { ...child };
  Object.defineProperty(copy, "module", {
    enumerable: true,
    get: () => {
      resolved ??= resolveDriverModule(child.module, root);
      return resolved;
    },
  });
  return copy;
}

/** Runs `action`, which must fail, and returns what it threw (an Error). */
export async function thrownBy(action: () => Promise<unknown>): Promise<Error> {
  const outcome = await settle(action);
  if (!outcome.threw) return expect.fail("expected the operation to fail, but it succeeded");
  expect(outcome.error, "the failure must be an Error").toBeInstanceOf(Error);
  return outcome.error as Error;
}

/** Runs `action`, which must fail with a RunledgerError, and returns that error. */
export async function failureOf(action: () => Promise<unknown>): Promise<RunledgerError> {
  const error = await thrownBy(action);
  expect(error, "the failure must be a RunledgerError").toBeInstanceOf(RunledgerError);
  return error as RunledgerError;
}

/**
 * The stable code `promise` is rejected with, "ok" when it resolves: for
 * tables of cases that succeed or fail (`expect(await codeOf(p)).toBe("busy")`).
 */
export async function codeOf(promise: Promise<unknown>): Promise<string> {
  const outcome = await settle(() => promise);
  if (!outcome.threw) return "ok";
  const code = (outcome.error as { code?: unknown } | undefined)?.code;
  return typeof code === "string" ? code : `non-runledger error: ${String(outcome.error)}`;
}

/**
 * What `action` was refused with, or "not refused": for calls made inside a
 * callback, where a failed expectation would be taken for the call's failure.
 */
export async function refusalOf(action: () => Promise<unknown>): Promise<unknown> {
  const outcome = await settle(action);
  return outcome.threw ? outcome.error : "not refused";
}

/** Runs `action` and says how it ended; a synchronous throw counts as a rejection. */
async function settle(
  action: () => unknown,
): Promise<{ threw: false } | { threw: true; error: unknown }> {
  try {
    await action();
    return { threw: false };
  } catch (error) {
    return { threw: true, error };
  }
}

/** SHA-256 of bytes, or of a string's UTF-8, in lowercase hex: how runledger names content. */
export function sha256Hex(data: Uint8Array | string): string {
  return createHash("sha256").update(data).digest("hex");
}

export interface ExpectedFailure {
  readonly code: string;
  readonly sqliteCode: string;
  /** False for refusals the port decides before the driver is called (no driver error to keep). */
  readonly hasCause?: boolean;
  /** Something the message must mention. */
  readonly mentions?: RegExp;
  /**
   * False: check only the primary code of `sqliteCode` (for subjects that do
   * not declare extendedErrorCodes). Default true: the exact code.
   */
  readonly extended?: boolean;
}

/** The shape every translated failure has: stable code, SQLite codes, a message, the cause. */
export function expectTranslated(error: RunledgerError, expected: ExpectedFailure): void {
  expect(error.code).toBe(expected.code);
  if (expected.extended !== false) expect(error.sqliteCode).toBe(expected.sqliteCode);
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

/**
 * A Uint8Array whose slice is a view of the same memory, as Node's Buffer's
 * is: what a library that keeps a copy of the caller's bytes must not rely
 * on `slice` to make.
 */
export class ViewSlicing extends Uint8Array {
  override slice(start?: number, end?: number) {
    return this.subarray(start, end);
  }
}

/** Byte-for-byte equality without building a diff of megabytes. */
export function sameBytes(a: Uint8Array, b: Uint8Array): boolean {
  if (a.byteLength !== b.byteLength) return false;
  for (let i = 0; i < a.byteLength; i++) if (a[i] !== b[i]) return false;
  return true;
}

/** The holder child: it locks on start and lets go on "commit" or "rollback". */
const HOLDER: ChildScript<HolderRequest, HolderMessage, HolderCommand> = {
  file: "holder",
  name: "lock holder",
  commands: ["commit", "rollback"],
};

async function startHolder(
  driver: ConformanceChild,
  location: string,
  statements: readonly string[],
): Promise<LockHolder> {
  const holder = ChildProcess.start(HOLDER, driver, { location, statements });
  onTestFinished(() => holder.kill());
  await holder.next("holding", HOLDER_START_MS);
  return {
    async release(command = "commit") {
      holder.tell(command);
      await holder.next("released", HOLDER_START_MS);
      await holder.exited;
    },
    crash: () => holder.kill("SIGKILL"),
  };
}

/** How the subject's driver is built in a child process; the tests that need one declare "childProcesses". */
export function subjectChild(subject: ConformanceSubject): ConformanceChild {
  const child = subject.child;
  if (child === undefined || subject.capabilities?.childProcesses !== true) {
    throw new Error("this test needs capabilities.childProcesses and subject.child");
  }
  return child;
}

/**
 * One of the scripts in src/child/, built to dist/child/<file>.js beside this
 * module's bundle. R is its request, M the messages it writes on stdout (one
 * JSON line each), C the commands it reads on stdin (one word a line).
 */
export interface ChildScript<
  R extends DriverSource,
  M extends { readonly state: string },
  C extends string = never,
> {
  readonly file: string;
  /** What error messages call it, e.g. "lock holder". */
  readonly name: string;
  /** The commands it takes on stdin; without them its stdin is closed from the start. */
  readonly commands?: readonly C[];
  /** Never set: it only ties the request and message types to the script. */
  readonly protocol?: { readonly request: R; readonly message: M };
}

/** The last message a one-shot child script writes, when it succeeded. */
export type ChildDone<M extends { readonly state: string }> = Extract<M, { state: "done" }>;

/**
 * A function that runs `script` once with a peer's (or the subject's) driver
 * and returns its final report; the process has exited when it returns, or
 * is killed after `timeoutMs`.
 */
export function oneShot<R extends DriverSource, M extends { readonly state: string }>(
  script: ChildScript<R, M>,
  timeoutMs: number,
): (driver: ConformanceChild, work: Omit<R, keyof DriverSource>) => Promise<ChildDone<M>> {
  return (driver, work) => ChildProcess.start(script, driver, work).report(timeoutMs);
}

/**
 * The suite's side of every child script: it spawns the script with the
 * driver's module and export plus `work` as its one JSON argument, collects
 * stdout (each line a JSON message) and stderr, and knows when it exits.
 * Long-lived children are driven with `tell` and `next`; one-shot peers are
 * awaited with `report`.
 */
export class ChildProcess<M extends { readonly state: string }, C extends string = never> {
  readonly exited: Promise<number | null>;
  readonly #process: NodeChildProcess;
  readonly #name: string;
  readonly #module: string;
  readonly #messages: M[] = [];
  #stdout = "";
  #stderr = "";
  /** stderr plus the stdout lines that were not JSON, in the order they came. */
  #diagnostics = "";
  #wake: () => void = () => {};

  /** `as`: run the script as another user (only root may; a permission bit means nothing to root). */
  static start<R extends DriverSource, M extends { readonly state: string }, C extends string>(
    script: ChildScript<R, M, C>,
    driver: ConformanceChild,
    work: Omit<R, keyof DriverSource>,
    as?: { readonly uid: number; readonly gid: number },
  ): ChildProcess<M, C> {
    const path = fileURLToPath(new URL(`./child/${script.file}.js`, import.meta.url));
    if (!existsSync(path)) {
      throw new Error(
        `the ${script.name} script is missing at ${path}: build @runledger/conformance`,
      );
    }
    const request = { module: driver.module, exportName: driver.exportName, ...work };
    const child = spawn(process.execPath, [path, JSON.stringify(request)], {
      stdio: [script.commands === undefined ? "ignore" : "pipe", "pipe", "pipe"],
      ...(as === undefined ? {} : { uid: as.uid, gid: as.gid }),
    });
    return new ChildProcess(child, script.name, driver.module);
  }

  private constructor(child: NodeChildProcess, name: string, module: string) {
    this.#process = child;
    this.#name = name;
    this.#module = module;
    child.stdin?.on("error", () => {}); // the child may already be gone
    child.stderr?.setEncoding("utf8").on("data", (text: string) => {
      this.#stderr += text;
      this.#diagnostics += text;
    });
    const stdout = child.stdout?.setEncoding("utf8");
    if (stdout === undefined) throw new Error(`the ${name} has no stdout`);
    stdout.on("data", (text: string) => {
      this.#stdout += text;
    });
    createInterface({ input: stdout }).on("line", (line) => {
      try {
        this.#messages.push(JSON.parse(line) as M);
      } catch {
        this.#diagnostics += `${line}\n`;
      }
      this.#wake();
    });
    this.exited = new Promise((resolve, reject) => {
      child.on("error", reject);
      child.on("exit", (code) => {
        resolve(code);
        this.#wake();
      });
    });
  }

  /** Writes one command line on the child's stdin. */
  tell(command: C): void {
    this.#process.stdin?.write(`${command}\n`);
  }

  /** The next message in `state`; a "failed" message, an exit or `timeoutMs` before it is an error. */
  async next<S extends M["state"]>(state: S, timeoutMs: number): Promise<Extract<M, { state: S }>> {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      const message = this.#messages.shift();
      if (message?.state === state) return message as Extract<M, { state: S }>;
      if (message?.state === "failed") {
        const failed = message as unknown as FailedMessage;
        throw new Error(
          `the ${this.#name} failed (${failed.code ?? "no code"}): ${failed.message}${this.#details()}`,
        );
      }
      if (message !== undefined) continue;
      if (this.#process.exitCode !== null || this.#process.signalCode !== null) {
        throw new Error(`the ${this.#name} exited before "${state}"${this.#details()}`);
      }
      const left = deadline - Date.now();
      if (left <= 0)
        throw new Error(`the ${this.#name} did not report "${state}"${this.#details()}`);
      await new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, left);
        this.#wake = () => {
          clearTimeout(timer);
          resolve();
        };
      });
    }
  }

  /**
   * Waits for a one-shot child to exit (killing it after `timeoutMs`) and
   * returns its "done" report, its last stdout line; a "failed" report, no
   * report or a non-zero exit is an error.
   */
  async report(timeoutMs: number): Promise<Extract<M, { state: "done" }>> {
    const timer = setTimeout(() => this.#process.kill(), timeoutMs);
    let code: number | null;
    try {
      code = await this.exited;
    } finally {
      clearTimeout(timer);
    }
    const lines = this.#stdout.trim().split("\n");
    let report: M | undefined;
    try {
      report = JSON.parse(lines[lines.length - 1] ?? "") as M;
    } catch {
      report = undefined;
    }
    const context = `\n--- ${this.#name} (${this.#module}) stdout ---\n${this.#stdout}\n--- stderr ---\n${this.#stderr}`;
    if (report?.state === "failed") {
      const failed = report as unknown as FailedMessage;
      throw new Error(
        `the ${this.#name} failed (${failed.code ?? "no code"}): ${failed.message}${context}`,
      );
    }
    if (report?.state !== "done" || code !== 0) {
      throw new Error(`the ${this.#name} exited with ${code} without a report${context}`);
    }
    return report as Extract<M, { state: "done" }>;
  }

  /** Kills the child (SIGTERM unless told) if it is still running and waits for it to exit. */
  async kill(signal: NodeJS.Signals = "SIGTERM"): Promise<void> {
    if (this.#process.exitCode === null && this.#process.signalCode === null) {
      this.#process.kill(signal);
      await this.exited;
    }
  }

  #details(): string {
    return this.#diagnostics === "" ? "" : `\n--- ${this.#name} stderr ---\n${this.#diagnostics}`;
  }
}

/** Content given as a stream: each piece handed over after a turn of the event loop. */
export async function* asyncIterableOf(pieces: readonly Uint8Array[]): AsyncGenerator<Uint8Array> {
  for (const piece of pieces) {
    await Promise.resolve();
    yield piece;
  }
}
