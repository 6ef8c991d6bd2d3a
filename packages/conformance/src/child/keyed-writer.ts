/**
 * One keyed step, killed at a chosen statement (keyed-writer-protocol.ts):
 * what a crash leaves for a retry by key to finish exactly once.
 *
 * Usage: node keyed-writer.js '<KeyedWriterRequest as JSON>'
 */
import { RunStore } from "@runledger/core";
import { FaultInjector } from "../faults.js";
import { loadDriver, readRequest, runChild, send } from "./common.js";
import {
  KEYED_STEP,
  type KeyedWriterReport,
  type KeyedWriterRequest,
  keyedStep,
} from "./keyed-writer-protocol.js";

/** Never outlive a forgotten test run. */
const LIFETIME_MS = 120_000;

async function main(): Promise<void> {
  const request = readRequest<KeyedWriterRequest>();
  const faults = new FaultInjector(await loadDriver(request));
  faults.arm({ nth: request.killAt ?? Number.POSITIVE_INFINITY, kill: true });
  const store = new RunStore({ driver: faults.driver });
  try {
    const lease = await store.open(request.location, {
      create: { workflowId: "keyed-kills", runId: "run-1" },
    });
    await lease.transact(keyedStep, { key: KEYED_STEP });
    // Statements after the COMMIT: a kill there leaves the step landed, its answer never used.
    await lease.read((r) => r.journal.list());
    await lease.release();
  } finally {
    await store.close();
  }
  await send<KeyedWriterReport>({ state: "done", statements: faults.counted });
}

runChild(main, { lifetimeMs: LIFETIME_MS });
