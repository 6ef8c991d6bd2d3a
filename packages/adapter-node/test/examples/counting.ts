import { nodeDriver } from "@runledger/adapter-node";
import { RunStore } from "@runledger/core";

const store = new RunStore({ driver: nodeDriver() });
const lease = await store.open("count-1.db", { create: { workflowId: "count", runId: "count-1" } });
await lease.transact(async (tx) => {
  await tx.journal.append({ kind: "started" });
  await tx.workspace.apply({ put: { "big.txt": "x".repeat(1000) } });
  await tx.workspace.pin("start");
});
const counts = await lease.read((r) => r.counts());
console.log([counts.events, counts.firstSequence, counts.lastSequence]); // [2,1,2]
console.log([counts.roots, counts.pins]); // [2,1]
await lease.release();
await store.close();
