import { nodeDriver } from "@runledger/adapter-node";
import { isRunledgerError, RunStore } from "@runledger/core";

const store = new RunStore({ driver: nodeDriver() });
const lease = await store.open("writer-3.db", {
  create: { workflowId: "write", runId: "writer-3" },
});
const draft = await lease.transact((tx) =>
  tx.workspace.apply({ put: { "draft.txt": "d".repeat(1000) } }),
);
const final = await lease.transact((tx) =>
  tx.workspace.apply({ put: { "final.txt": "f".repeat(1000) }, delete: ["draft.txt"] }),
);
// While an event names the draft's root, nothing it reaches is garbage.
console.log(await lease.transact((tx) => tx.workspace.collectGarbage())); // {"nodes":0,"files":0,"chunks":0}
const report = await lease.transact(async (tx) => {
  await tx.workspace.prune({ before: final.sequence });
  return tx.workspace.collectGarbage();
});
console.log(report.files); // 1 (draft.txt: no root the run retains reaches it)
try {
  await lease.read((r) => r.workspace.list("", { root: draft.rootId }));
} catch (error) {
  if (!isRunledgerError(error, "root_not_found")) throw error;
  console.log(error.code); // "root_not_found"
}
await lease.release();
await store.close();
