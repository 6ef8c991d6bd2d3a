import { nodeDriver } from "@runledger/adapter-node";
import { RunStore } from "@runledger/core";

const store = new RunStore({ driver: nodeDriver() });
const lease = await store.open("essay-1.db", {
  create: { workflowId: "essays", runId: "essay-1" },
});
await lease.transact(async (tx) => {
  await tx.workspace.apply({ put: { "essay.md": "draft" } }); // event 1: a new root
  await tx.journal.append({ kind: "reviewed" }); // event 2: the same root
  await tx.workspace.apply({ put: { "essay.md": "final" } }); // event 3: a new root
});
const versions = await lease.read(async (r) => {
  const found: string[] = [];
  for await (const { sequence, rootId } of r.workspace.history()) {
    const text = new TextDecoder().decode(await r.workspace.read("essay.md", { root: rootId }));
    found.push(`${sequence}: ${text}`);
  }
  return found;
});
console.log(versions); // ["1: draft","3: final"]
await lease.release();
await store.close();
