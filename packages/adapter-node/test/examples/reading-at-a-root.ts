import { nodeDriver } from "@runledger/adapter-node";
import { isRunledgerError, RunStore } from "@runledger/core";

const store = new RunStore({ driver: nodeDriver() });
const lease = await store.open("brief-4.db", {
  create: { workflowId: "briefs", runId: "brief-4" },
});
await lease.transact(async (tx) => {
  await tx.workspace.apply({ put: { "brief.md": "draft" } }, { key: "brief:draft" });
  await tx.workspace.apply({ put: { "brief.md": "final", "faq.md": "?" } }, { key: "brief:final" });
});
await lease.read(async (r) => {
  // Every event records the root current when it was written: find the event, read at its root.
  const draft = await r.journal.get("brief:draft");
  const root = draft?.rootId;
  console.log((await r.workspace.list("", { root })).map((entry) => entry.name)); // ["brief.md"]
  console.log(new TextDecoder().decode(await r.workspace.read("brief.md", { root }))); // "draft"
  // diff, a copy's `at` and fork's `at` also name a root by its event: { sequence }.
  const changed: string[] = [];
  for await (const change of r.workspace.diff({ sequence: 1 }, { sequence: 2 })) {
    changed.push(`${change.change} ${change.path}`);
  }
  console.log(changed); // ["modified brief.md","added faq.md"]
});
// Once the event is pruned and the root collected, the run no longer holds that root.
await lease.transact(async (tx) => {
  await tx.workspace.prune({ before: 2 });
  await tx.workspace.collectGarbage();
});
try {
  await lease.read((r) => r.workspace.diff({ sequence: 1 }, { sequence: 2 }).next());
} catch (error) {
  if (!isRunledgerError(error, "root_not_found")) throw error;
  console.log(error.details?.sequence); // 1
}
await lease.release();
await store.close();
