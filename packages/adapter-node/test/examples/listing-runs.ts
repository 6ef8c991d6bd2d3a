import { nodeDriver } from "@runledger/adapter-node";
import { RunStore } from "@runledger/core";

const store = new RunStore({ driver: nodeDriver(), catalog: "runs.catalog" });
for (const id of ["a", "b", "c"]) {
  const lease = await store.open(`order-${id}.db`, {
    create: { workflowId: "orders", runId: `order-${id}` },
  });
  await lease.transact(async (tx) => {
    await tx.journal.append({ kind: "started" });
    if (id === "b") await tx.run.stop({ status: "interrupted" });
  });
  await lease.release();
}
const interrupted = await store.list({ workflowId: "orders", status: ["interrupted"] });
console.log(interrupted.runs.map((run) => run.runId)); // ["order-b"]
const page = await store.list({ limit: 2 });
console.log(page.runs.length); // 2
const rest = await store.list({ after: page.next });
console.log(rest.runs.length); // 1
await store.remove("order-a.db");
const report = await store.reconcile({ directory: "." });
console.log(report.removed.length === 0 && report.unchanged); // 2
await store.close();
