import { nodeDriver } from "@runledger/adapter-node";
import { RunStore } from "@runledger/core";

const store = new RunStore({ driver: nodeDriver(), clock: () => 1000 });
const lease = await store.open("nightly-7.db", {
  create: { workflowId: "nightly", runId: "nightly-7", definition: { cron: "0 3 * * *" } },
});
const run = await lease.read((r) => r.run.get());
console.log([run.workflowId, run.runId, run.status]); // ["nightly","nightly-7","running"]
console.log([run.stopReason, run.createdAt]); // [null,1000]
await lease.transact((tx) => tx.run.stop({ status: "completed" }));
console.log(await lease.read((r) => r.run.status())); // "completed"
await lease.release();
await store.close();
