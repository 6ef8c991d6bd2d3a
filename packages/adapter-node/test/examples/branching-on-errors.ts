import { nodeDriver } from "@runledger/adapter-node";
import { ERROR_CODES, isRunledgerError, RunledgerError, RunStore } from "@runledger/core";

const store = new RunStore({ driver: nodeDriver() });
const lease = await store.open("retry-1.db", { create: { workflowId: "retry", runId: "retry-1" } });
try {
  await lease.read((r) => r.workspace.read("missing.txt"));
} catch (error) {
  console.log(error instanceof RunledgerError); // true
  if (isRunledgerError(error, "path_not_found")) {
    console.log(error.details?.path); // "missing.txt"
  } else throw error;
}
console.log(ERROR_CODES.includes("busy")); // true
await lease.release();
await store.close();
