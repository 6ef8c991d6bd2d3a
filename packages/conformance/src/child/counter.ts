/**
 * A second process that increments a shared counter through core: it builds
 * the subject's driver, opens the database with a ConnectionProvider on its
 * default busy timeout, reports "ready", waits for "go" on stdin, then runs
 * `transactions` write transactions that each read the counter and write it
 * back plus one. The first failure of any kind, `busy` included, ends the
 * process with a "failed" report saying how far it got.
 *
 * Usage: node counter.js '<CounterRequest as JSON>'
 */
import { isAbsolute } from "node:path";
import { createInterface } from "node:readline";
import { pathToFileURL } from "node:url";
import { ConnectionProvider, type Driver } from "@runledger/core";
import type { CounterMessage, CounterRequest } from "./counter-protocol.js";

/** Never outlive a forgotten test run. */
const LIFETIME_MS = 300_000;

function send(message: CounterMessage): Promise<void> {
  return new Promise((resolve) =>
    process.stdout.write(`${JSON.stringify(message)}\n`, () => resolve()),
  );
}

async function loadDriver(request: CounterRequest): Promise<Driver> {
  const specifier = isAbsolute(request.module)
    ? pathToFileURL(request.module).href
    : request.module;
  const exports = (await import(specifier)) as Record<string, unknown>;
  const factory = exports[request.exportName];
  if (typeof factory !== "function") {
    throw new Error(`${request.module} has no function export named ${request.exportName}`);
  }
  return (factory as () => Driver)();
}

async function waitForGo(): Promise<void> {
  for await (const line of createInterface({ input: process.stdin })) {
    if (line.trim() === "go") return;
  }
  throw new Error("stdin closed before go");
}

/** Transactions committed so far, for the failure report. */
let committed = 0;

async function main(): Promise<void> {
  const request = JSON.parse(process.argv[2] ?? "") as CounterRequest;
  const store = new ConnectionProvider({ driver: await loadDriver(request) });
  try {
    const lease = await store.open(request.location);
    await send({ state: "ready" });
    await waitForGo();
    const started = Date.now();
    for (committed = 0; committed < request.transactions; committed++) {
      await lease.transact(async (tx) => {
        const { rows } = await tx.execute("SELECT n FROM counter WHERE id = 1");
        const n = rows[0]?.n;
        if (typeof n !== "number") throw new Error(`counter row 1 holds ${String(n)}`);
        const { changes } = await tx.execute("UPDATE counter SET n = ? WHERE id = 1", [n + 1]);
        if (changes !== 1) throw new Error(`the update changed ${changes} rows`);
      });
    }
    await lease.release();
    await send({ state: "done", committed, ms: Date.now() - started });
  } finally {
    await store.close();
  }
}

setTimeout(() => process.exit(3), LIFETIME_MS).unref();

main().then(
  () => process.exit(0),
  async (error: unknown) => {
    const code = (error as { code?: unknown } | null)?.code;
    await send({
      state: "failed",
      ...(typeof code === "string" ? { code } : {}),
      message:
        `after ${committed} committed transactions: ` +
        (error instanceof Error ? (error.stack ?? error.message) : String(error)),
    });
    process.exit(1);
  },
);
