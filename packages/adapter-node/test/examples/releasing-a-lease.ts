import { nodeDriver } from "@runledger/adapter-node";
import { isRunledgerError, RunStore } from "@runledger/core";

const store = new RunStore({ driver: nodeDriver() });
const lease = await store.open("job-5.db", { create: { workflowId: "jobs", runId: "job-5" } });
await lease.release();
await lease.release(); // a second release does nothing
try {
  await lease.read((r) => r.run.get());
} catch (error) {
  if (!isRunledgerError(error, "lease_released")) throw error;
  console.log(error.code); // "lease_released"
}
{
  // Released when the block ends, however it ends.
  await using scoped = await store.open("job-5.db");
  console.log((await scoped.read((r) => r.run.get())).runId); // "job-5"
}
console.log(store.entries.length); // 0 (the last lease gone, the file is closed)
await store.close();
