import { nodeDriver } from "@runledger/adapter-node";
import { isRunledgerError, RunStore } from "@runledger/core";

const store = new RunStore({ driver: nodeDriver() });
const lease = await store.open("order-42.db", {
  create: { workflowId: "orders", runId: "order-42" },
});
await lease.transact(async (tx) => {
  await tx.workspace.apply({ put: { "cart.json": "[]" } }, { event: { kind: "started" } });
  const { sequence } = await tx.journal.append({ kind: "paid" });
  await tx.run.stop({ status: "completed", reason: { event: sequence } });
});
const run = await lease.read((r) => r.run.get());
console.log(run.status); // "completed"
try {
  await lease.transact((tx) => tx.journal.append({ kind: "late" }));
} catch (error) {
  if (!isRunledgerError(error, "run_finished")) throw error;
  console.log(error.code); // "run_finished" (typed so: a terminal status is final)
}
await lease.release();
await store.close();
