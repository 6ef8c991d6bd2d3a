import { nodeDriver } from "@runledger/adapter-node";
import { RunStore } from "@runledger/core";

const store = new RunStore({ driver: nodeDriver() });
const lease = await store.open("agent-1.db", {
  create: { workflowId: "agents", runId: "agent-1" },
});
await lease.transact(async (tx) => {
  await tx.journal.append({ kind: "tool.call", tool: "search" }, { key: "call:1" });
  await tx.workspace.apply({ put: { "result.json": "{}" } }, { key: "result:1" });
});
await lease.read(async (r) => {
  console.log((await r.journal.get("call:1"))?.record.tool); // "search"
  const result = await r.journal.get("result:1");
  console.log(result?.rootId === (await r.workspace.currentRoot())); // true
  console.log((await r.journal.get("call:2")) === undefined); // true
});
await lease.release();
await store.close();
