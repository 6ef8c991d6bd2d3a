import { nodeDriver } from "@runledger/adapter-node";
import { RunStore } from "@runledger/core";

// A run made by a store without the catalog: the catalog does not know it yet.
const plain = new RunStore({ driver: nodeDriver() });
const lease = await plain.open("import-1.db", {
  create: { workflowId: "imports", runId: "import-1" },
});
await lease.release();
await plain.close();

const store = new RunStore({ driver: nodeDriver(), catalog: "runs.catalog" });
console.log(store.catalog); // "runs.catalog"
console.log((await store.list()).runs.length); // 0
const report = await store.reconcile({ directory: "." });
console.log([report.added.length, report.skipped.length]); // [1,0]
console.log((await store.list()).runs.map((run) => run.runId)); // ["import-1"]
await store.close();
