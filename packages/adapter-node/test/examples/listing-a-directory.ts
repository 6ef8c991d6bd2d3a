import { nodeDriver } from "@runledger/adapter-node";
import { isRunledgerError, RunStore } from "@runledger/core";

const store = new RunStore({ driver: nodeDriver() });
const lease = await store.open("guide-5.db", {
  create: { workflowId: "guides", runId: "guide-5" },
});
const before = await lease.transact((tx) =>
  tx.workspace.apply({ put: { "guide/a.md": "a", "guide/b.md": "b", "guide/img/x.png": "x" } }),
);
await lease.transact((tx) => tx.workspace.apply({ delete: ["guide/b.md"] }));
await lease.read(async (r) => {
  const now = await r.workspace.list("guide");
  console.log(now.map((entry) => `${entry.kind} ${entry.path}`)); // ["file guide/a.md","directory guide/img"]
  const then = await r.workspace.list("guide", { root: before.rootId });
  console.log(then.map((entry) => entry.name)); // ["a.md","b.md","img"]
  try {
    await r.workspace.list("guide/a.md");
  } catch (error) {
    if (!isRunledgerError(error, "not_a_directory")) throw error;
    console.log(error.code); // "not_a_directory"
  }
});
await lease.release();
await store.close();
