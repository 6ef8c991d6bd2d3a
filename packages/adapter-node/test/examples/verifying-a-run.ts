import { nodeDriver } from "@runledger/adapter-node";
import { RunStore } from "@runledger/core";

const store = new RunStore({ driver: nodeDriver() });
const lease = await store.open("archive-2.db", {
  create: { workflowId: "archive", runId: "archive-2" },
});
await lease.transact((tx) =>
  tx.workspace.apply({ put: { "scan.bin": new Uint8Array(600_000).fill(1) } }),
);
const steps = new Set<string>();
const report = await lease.verify({ progress: (step) => steps.add(step) });
console.log(report.ok); // true
console.log(report.problems); // []
console.log(report.counts.chunks); // 3
console.log([...steps]); // ["bytes","roots"]
await lease.release();
await store.close();
