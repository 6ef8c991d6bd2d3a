/**
 * One run's life through a RunStore with a catalog, killed at a chosen
 * statement (catalog-writer-protocol.ts). Each step commits in the run
 * before the store notes it in the catalog, so a kill between the two
 * leaves a run the catalog has not heard of: what the suite checks the
 * next open, or a reconcile, mends.
 *
 * Usage: node catalog-writer.js '<CatalogWriterRequest as JSON>'
 */
import { RunStore } from "@runledger/core";
import { FaultInjector } from "../faults.js";
import type { CatalogWriterReport, CatalogWriterRequest } from "./catalog-writer-protocol.js";
import { loadDriver, readRequest, runChild, send } from "./common.js";

/** Never outlive a forgotten test run. */
const LIFETIME_MS = 120_000;

async function main(): Promise<void> {
  const request = readRequest<CatalogWriterRequest>();
  const faults = new FaultInjector(await loadDriver(request));
  faults.arm({ nth: request.killAt ?? Number.POSITIVE_INFINITY, kill: true });
  const store = new RunStore({ driver: faults.driver, catalog: request.catalog });
  try {
    const lease = await store.open(request.location, {
      create: { workflowId: "catalog-kills", runId: "run-1" },
    });
    await lease.transact(async (tx) => {
      await tx.journal.append({ step: "fetch" });
      await tx.journal.append({ step: "build" });
    });
    await lease.transact((tx) => tx.run.stop({ status: "interrupted" }));
    await lease.transact((tx) => tx.run.resume());
    await lease.transact(async (tx) => {
      await tx.journal.append({ step: "done" });
      await tx.run.stop({ status: "completed" });
    });
    await lease.release();
  } finally {
    await store.close();
  }
  await send<CatalogWriterReport>({ state: "done", statements: faults.counted });
}

runChild(main, { lifetimeMs: LIFETIME_MS });
