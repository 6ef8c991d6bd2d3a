import { nodeDriver } from "@runledger/adapter-node";
import { RunStore } from "@runledger/core";

const store = new RunStore({ driver: nodeDriver() });
const lease = await store.open("report-3.db", {
  create: { workflowId: "docs", runId: "report-3" },
});
const draft = await lease.transact((tx) =>
  tx.workspace.apply({ put: { "draft.md": "# Draft", "notes/a.txt": "a" } }),
);
const final = await lease.transact((tx) =>
  tx.workspace.apply({
    put: { "draft.md": "# Final", "notes/b.txt": "b" },
    delete: ["notes/a.txt"],
  }),
);
await lease.read(async (r) => {
  const changes = [];
  for await (const change of r.workspace.diff(
    { sequence: draft.sequence },
    { root: final.rootId },
  )) {
    changes.push(`${change.change} ${change.path}`);
  }
  console.log(changes); // ["modified draft.md","removed notes/a.txt","added notes/b.txt"]
});
await lease.release();
await store.close();
