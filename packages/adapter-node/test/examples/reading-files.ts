import { nodeDriver } from "@runledger/adapter-node";
import { isRunledgerError, RunStore } from "@runledger/core";

const store = new RunStore({ driver: nodeDriver() });
const lease = await store.open("plan-2.db", { create: { workflowId: "plans", runId: "plan-2" } });
const first = await lease.transact((tx) => tx.workspace.apply({ put: { "plan.md": "# v1" } }));
await lease.transact((tx) => tx.workspace.apply({ put: { "plan.md": "# v2" } }));
const text = (bytes: Uint8Array) => new TextDecoder().decode(bytes);
await lease.read(async (r) => {
  console.log(text(await r.workspace.read("plan.md"))); // "# v2"
  console.log(text(await r.workspace.read("plan.md", { root: first.rootId }))); // "# v1"
  try {
    await r.workspace.read("plans.md");
  } catch (error) {
    if (!isRunledgerError(error, "path_not_found")) throw error;
    console.log(error.details?.path); // "plans.md"
  }
});
await lease.release();
await store.close();
