import { nodeDriver } from "@runledger/adapter-node";
import { RunStore } from "@runledger/core";

const store = new RunStore({ driver: nodeDriver() });
const lease = await store.open("report-8.db", {
  create: { workflowId: "reports", runId: "report-8" },
});
await lease.transact((tx) =>
  tx.workspace.apply({ put: { "summary.md": "# Q3" } }, { event: { kind: "drafted" } }),
);
// One snapshot: every read in the callback sees the same committed state.
const seen = await lease.read(async (r) => {
  const [event] = await r.journal.list({ order: "desc", limit: 1 });
  const files = await r.workspace.list();
  return { status: await r.run.status(), last: event?.record.kind, files: files.length };
});
console.log(seen); // {"status":"running","last":"drafted","files":1}
await lease.release();
await store.close();
