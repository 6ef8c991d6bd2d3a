import { nodeDriver } from "@runledger/adapter-node";
import { RunStore } from "@runledger/core";

const store = new RunStore({ driver: nodeDriver() });
const lease = await store.open("repo-1.db", { create: { workflowId: "repos", runId: "repo-1" } });
await lease.transact((tx) =>
  tx.workspace.apply({ put: { "src/index.ts": "i", "src/lib/a.ts": "a", "README.md": "r" } }),
);
await lease.read(async (r) => {
  const all: string[] = [];
  for await (const file of r.workspace.walk()) all.push(file.path);
  console.log(all); // ["README.md","src/index.ts","src/lib/a.ts"]
  const sizes: number[] = [];
  for await (const file of r.workspace.walk("src")) sizes.push(file.size);
  console.log(sizes); // [1,1]
});
await lease.release();
await store.close();
