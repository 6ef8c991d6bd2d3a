import { nodeDriver } from "@runledger/adapter-node";
import { isRunledgerError, RunStore } from "@runledger/core";

const store = new RunStore({ driver: nodeDriver() });
const lease = await store.open("scratch-1.db", {
  create: { workflowId: "scratch", runId: "scratch-1" },
});
try {
  await store.remove("scratch-1.db");
} catch (error) {
  if (!isRunledgerError(error, "run_in_use")) throw error;
  console.log(error.code); // "run_in_use" (a lease holds it; nothing was deleted)
}
await lease.release();
await store.remove("scratch-1.db");
try {
  await store.open("scratch-1.db");
} catch (error) {
  if (!isRunledgerError(error, "not_found")) throw error;
  console.log(error.code); // "not_found"
}
await store.close();
