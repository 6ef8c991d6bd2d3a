import { nodeDriver } from "@runledger/adapter-node";
import { isRunledgerError, RunStore } from "@runledger/core";

const store = new RunStore({ driver: nodeDriver() });
const source = await store.open("draft-1.db", {
  create: { workflowId: "drafts", runId: "draft-1" },
});
const outline = await source.transact((tx) =>
  tx.workspace.apply({ put: { "outline.md": "# Plan" } }),
);
await source.transact((tx) =>
  tx.workspace.apply({ put: { "outline.md": "# Plan, revised", "body.md": "Text" } }),
);
// A new run from the first root: only what that root reaches is copied.
const fork = await store.fork("draft-1.db", "draft-1b.db", {
  create: { workflowId: "drafts", runId: "draft-1b" },
  at: { sequence: outline.sequence },
});
console.log(fork.rootId === outline.rootId); // true
const [first] = await fork.lease.read((r) => r.journal.list());
console.log(first?.record.kind); // "fork"
const names = await fork.lease.read(async (r) => (await r.workspace.list()).map((e) => e.name));
console.log(names); // ["outline.md"]
try {
  await store.fork("draft-1.db", "draft-1b.db", {
    create: { workflowId: "drafts", runId: "draft-1b" },
  });
} catch (error) {
  if (!isRunledgerError(error, "fork_target_not_empty")) throw error;
  console.log(error.code); // "fork_target_not_empty"
}
await fork.lease.release();
await source.release();
await store.close();
