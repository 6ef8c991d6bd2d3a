import { nodeDriver } from "@runledger/adapter-node";
import { isRunledgerError, RunStore } from "@runledger/core";

const store = new RunStore({ driver: nodeDriver() });
const lease = await store.open("review-4.db", {
  create: { workflowId: "review", runId: "review-4" },
});
await lease.transact((tx) => tx.run.stop({ status: "suspended" })); // waiting for a human
const resumed = await lease.transact((tx) => tx.run.resume());
const [event] = await lease.read((r) => r.journal.list({ after: resumed.sequence - 1 }));
console.log(event?.record); // {"kind":"run.resumed","from":"suspended"}
try {
  await lease.transact((tx) => tx.run.resume());
} catch (error) {
  if (!isRunledgerError(error, "run_not_stopped")) throw error;
  console.log(error.code); // "run_not_stopped"
}
await lease.transact(async (tx) => {
  await tx.run.stop({ status: "suspended" });
  await tx.run.resume({ event: { kind: "approved", by: "ada" } });
});
console.log((await lease.read((r) => r.run.get())).status); // "running"
await lease.release();
await store.close();
