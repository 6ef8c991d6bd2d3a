/**
 * Helpers shared by the connection, transaction and cross-process families
 * (spec §4, §5): stores closed when their test ends, a driver wrapper that
 * slows statements down so that "still running" is observable, and the
 * parent's side of the counter child process.
 */
import { type ChildProcessWithoutNullStreams, spawn } from "node:child_process";
import { existsSync } from "node:fs";
import { createInterface } from "node:readline";
import { fileURLToPath } from "node:url";
import {
  type BeginMode,
  ConnectionProvider,
  type ConnectionProviderOptions,
  type Driver,
  type DriverConnection,
  type DriverTransaction,
  type Lease,
  type QueryResult,
  type SqlValue,
} from "@runledger/core";
import { onTestFinished } from "vitest";
import type { CounterMessage, CounterRequest } from "../child/counter-protocol.js";
import type { Fixtures } from "../fixtures.js";

export type StoreOptions = Omit<ConnectionProviderOptions<true>, "driver"> & {
  readonly driver?: Driver;
};

/** A store on the subject's driver (or the one given), closed when the current test ends. */
export function store(fx: Fixtures, options: StoreOptions = {}): ConnectionProvider<true> {
  const provider = new ConnectionProvider<true>({ driver: fx.driver(), ...options });
  onTestFinished(() => provider.close());
  return provider;
}

/**
 * A new database at a fresh location, made by a store that runs `statements`
 * in one transaction and is closed again before this returns, so the caller
 * starts with no entry open.
 */
export async function seededLocation(fx: Fixtures, ...statements: string[]): Promise<string> {
  const location = fx.location();
  const seeding = new ConnectionProvider<true>({ driver: fx.driver() });
  try {
    const lease = await seeding.open(location, { create: true });
    await lease.transact(async (tx) => {
      for (const sql of statements) await tx.execute(sql);
    });
  } finally {
    await seeding.close();
  }
  return location;
}

export function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}

/** The values of one column of a table, in rowid order, read through the lease. */
export async function column(lease: Lease, table: string, name = "x"): Promise<unknown[]> {
  return lease.read(async (reader) => {
    const { rows } = await reader.execute(`SELECT ${name} FROM ${table} ORDER BY rowid`);
    return rows.map((row) => row[name]);
  });
}

/**
 * Wraps a driver so that every statement run inside a transaction session
 * waits `delayMs` on a timer before it reaches the real session: a statement
 * the caller did not await is then still running when its callback returns.
 */
export function slowStatements(inner: Driver, delayMs: number): Driver {
  const slow = (transaction: DriverTransaction): DriverTransaction => ({
    async execute(sql: string, params?: readonly SqlValue[]): Promise<QueryResult> {
      await sleep(delayMs);
      return transaction.execute(sql, params);
    },
    async executeScript(sql: string): Promise<void> {
      await sleep(delayMs);
      return transaction.executeScript(sql);
    },
    commit: () => transaction.commit(),
    rollback: () => transaction.rollback(),
  });
  return {
    name: `${inner.name}+slow`,
    canonicalize: (location) => inner.canonicalize(location),
    async open(location, options): Promise<DriverConnection> {
      const connection = await inner.open(location, options);
      return {
        execute: (sql, params) => connection.execute(sql, params),
        executeScript: (sql) => connection.executeScript(sql),
        begin: async (mode: BeginMode) => slow(await connection.begin(mode)),
        configure: (settings) => connection.configure(settings),
        close: () => connection.close(),
      };
    },
  };
}

/** The counter script, built to dist/child/counter.js beside this module's bundle. */
function counterScript(): string {
  const path = fileURLToPath(new URL("./child/counter.js", import.meta.url));
  if (!existsSync(path)) {
    throw new Error(`the counter script is missing at ${path}: build @runledger/conformance`);
  }
  return path;
}

/** The parent's side of one counter process: JSON lines in, one word out. */
export class CounterProcess {
  readonly exited: Promise<number | null>;
  readonly #child: ChildProcessWithoutNullStreams;
  readonly #messages: CounterMessage[] = [];
  #stderr = "";
  #wake: () => void = () => {};

  /** Starts a counter process; it is killed when the current test ends, if still running. */
  static start(fx: Fixtures, location: string, transactions: number): CounterProcess {
    const child = fx.subject.child;
    if (child === undefined) throw new Error("this family needs subject.child to start a process");
    const request: CounterRequest = {
      module: child.module,
      exportName: child.exportName,
      location,
      transactions,
    };
    const process_ = new CounterProcess(
      spawn(process.execPath, [counterScript(), JSON.stringify(request)], {
        stdio: ["pipe", "pipe", "pipe"],
      }),
    );
    onTestFinished(() => process_.kill());
    return process_;
  }

  private constructor(child: ChildProcessWithoutNullStreams) {
    this.#child = child;
    child.stdin.on("error", () => {});
    child.stderr.setEncoding("utf8").on("data", (text: string) => {
      this.#stderr += text;
    });
    createInterface({ input: child.stdout }).on("line", (line) => {
      try {
        this.#messages.push(JSON.parse(line) as CounterMessage);
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

  /** Tells a ready process to start counting. */
  go(): void {
    this.#child.stdin.write("go\n");
  }

  /** The next message in `state`; a "failed" message or an exit before it is an error. */
  async next<S extends CounterMessage["state"]>(
    state: S,
    timeoutMs: number,
  ): Promise<Extract<CounterMessage, { state: S }>> {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      const message = this.#messages.shift();
      if (message?.state === state) return message as Extract<CounterMessage, { state: S }>;
      if (message?.state === "failed") {
        throw new Error(
          `a counter process failed (${message.code ?? "no code"}): ${message.message}${this.#details()}`,
        );
      }
      if (message !== undefined) continue;
      if (this.#child.exitCode !== null || this.#child.signalCode !== null) {
        throw new Error(`a counter process exited before "${state}"${this.#details()}`);
      }
      const left = deadline - Date.now();
      if (left <= 0)
        throw new Error(`a counter process did not report "${state}"${this.#details()}`);
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
    if (this.#child.exitCode === null && this.#child.signalCode === null) {
      this.#child.kill();
      await this.exited;
    }
  }

  #details(): string {
    return this.#stderr === "" ? "" : `\n--- counter stderr ---\n${this.#stderr}`;
  }
}
