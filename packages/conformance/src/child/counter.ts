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
import { ConnectionProvider } from "@runledger/core/engine";
import { loadDriver, nextCommand, readRequest, runChild, send, stackOf } from "./common.js";
import type { CounterMessage, CounterRequest } from "./counter-protocol.js";

/** Never outlive a forgotten test run. */
const LIFETIME_MS = 300_000;

async function waitForGo(): Promise<void> {
  if ((await nextCommand(["go"])) === undefined) throw new Error("stdin closed before go");
}

/** Transactions committed so far, for the failure report. */
let committed = 0;

async function main(): Promise<void> {
  const request = readRequest<CounterRequest>();
  const store = new ConnectionProvider({ driver: await loadDriver(request) });
  try {
    const lease = await store.open(request.location);
    await send<CounterMessage>({ state: "ready" });
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
    await send<CounterMessage>({ state: "done", committed, ms: Date.now() - started });
  } finally {
    await store.close();
  }
}

runChild(main, {
  lifetimeMs: LIFETIME_MS,
  describe: (error) => `after ${committed} committed transactions: ${stackOf(error)}`,
});
