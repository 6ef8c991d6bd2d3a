import { nodeDriver } from "@runledger/adapter-node";
import { isRunledgerError, RunStore } from "@runledger/core";

const store = new RunStore({ driver: nodeDriver() });
const lease = await store.open("batch-1.db", { create: { workflowId: "batch", runId: "batch-1" } });
const pending = lease.transact((tx) => tx.journal.append({ kind: "queued" }));
await store.close(); // the work already called finishes first
console.log((await pending).sequence); // 1
console.log([store.closed, store.entries.length]); // [true,0]
try {
  await lease.read((r) => r.journal.list());
} catch (error) {
  if (!isRunledgerError(error, "provider_closed")) throw error;
  console.log(error.code); // "provider_closed"
}
