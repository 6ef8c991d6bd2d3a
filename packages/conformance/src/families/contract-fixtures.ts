/**
 * Helpers shared by the connection, transaction and cross-process families
 * (docs/contracts.md): stores closed when their test ends, a driver wrapper that
 * slows statements down so that "still running" is observable, and the
 * parent's side of the counter child process.
 */
import {
  ConnectionProvider,
  type ConnectionProviderOptions,
  type Lease,
} from "@runledger/core/engine";
import type {
  BeginMode,
  Driver,
  DriverConnection,
  DriverTransaction,
  QueryResult,
  SqlValue,
} from "@runledger/core/port";
import { onTestFinished } from "vitest";
import type { CounterMessage, CounterRequest } from "../child/counter-protocol.js";
import { ChildProcess, type ChildScript, type Fixtures, subjectChild } from "../fixtures.js";

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
    get active() {
      return transaction.active;
    },
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
        ...(connection.remote === undefined ? {} : { remote: connection.remote }),
        execute: (sql, params) => connection.execute(sql, params),
        executeScript: (sql) => connection.executeScript(sql),
        begin: async (mode: BeginMode) => slow(await connection.begin(mode)),
        configure: (settings) => connection.configure(settings),
        close: () => connection.close(),
      };
    },
  };
}

/** The counter child: it opens the database, says "ready" and counts on "go". */
const COUNTER: ChildScript<CounterRequest, CounterMessage, "go"> = {
  file: "counter",
  name: "counter process",
  commands: ["go"],
};

/** Starts a counter process; it is killed when the current test ends, if still running. */
export function startCounter(
  fx: Fixtures,
  location: string,
  transactions: number,
): ChildProcess<CounterMessage, "go"> {
  const counter = ChildProcess.start(COUNTER, subjectChild(fx.subject), {
    location,
    transactions,
  });
  onTestFinished(() => counter.kill());
  return counter;
}
