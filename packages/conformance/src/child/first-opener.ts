/**
 * One of several processes that open the same new location with `create` at
 * the same moment, round after round (docs/contracts.md: concurrent first openers).
 * Exactly one of them creates the run; the others must open it — waiting
 * on the creator's lock and retrying the WAL switch while it is busy —
 * rather than fail or create a second one. Its clock is its own number, so
 * the run's createdAt names the creator.
 *
 * Usage: node first-opener.js '<FirstOpenerRequest as JSON>'
 */
import { RunStore } from "@runledger/core";
import { loadDriver, nextCommand, readRequest, runChild, send } from "./common.js";
import type { FirstOpenerMessage, FirstOpenerRequest } from "./first-opener-protocol.js";

/** Never outlive a forgotten test run. */
const LIFETIME_MS = 300_000;

async function main(): Promise<void> {
  const request = readRequest<FirstOpenerRequest>();
  const store = new RunStore({ driver: await loadDriver(request), clock: () => request.clock });
  try {
    for (const [round, location] of request.locations.entries()) {
      await send<FirstOpenerMessage>({ state: "ready", round });
      if ((await nextCommand(["go"])) === undefined) throw new Error("stdin closed before go");
      const lease = await store.open(location, { create: request.create });
      const run = await lease.read((r) => r.run.get());
      await lease.release();
      await send<FirstOpenerMessage>({ state: "opened", round, createdAt: run.createdAt });
    }
  } finally {
    await store.close();
  }
}

runChild(main, { lifetimeMs: LIFETIME_MS });
