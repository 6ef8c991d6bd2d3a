import { nodeDriver } from "@runledger/adapter-node";
import { isRunledgerError, RunStore } from "@runledger/core";

const store = new RunStore({ driver: nodeDriver() });
try {
  await store.open("order-9.db");
} catch (error) {
  if (!isRunledgerError(error, "not_found")) throw error;
  console.log(error.code); // "not_found" (without create, nothing is created)
}
const lease = await store.open("order-9.db", {
  create: { workflowId: "orders", runId: "order-9", definition: { steps: ["pay", "ship"] } },
});
console.log(lease.location.endsWith("order-9.db")); // true (the canonical, absolute path)
await lease.release();
try {
  await store.open("order-9.db", { create: { workflowId: "orders", runId: "order-10" } });
} catch (error) {
  if (!isRunledgerError(error, "run_identity_mismatch")) throw error;
  console.log(error.details?.runId); // "order-9"
}
const reader = await store.open("order-9.db", { readOnly: true });
console.log((await reader.read((r) => r.run.get())).definition); // {"steps":["pay","ship"]}
try {
  await reader.transact((tx) => tx.journal.append({ kind: "late" }));
} catch (error) {
  if (!isRunledgerError(error, "read_only")) throw error;
  console.log(reader.readOnly); // true
}
await reader.release();
await store.close();
