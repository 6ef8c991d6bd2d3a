import { nodeDriver } from "@runledger/adapter-node";
import { RunStore } from "@runledger/core";

const store = new RunStore({ driver: nodeDriver() });
const lease = await store.open("notes-2.db", { create: { workflowId: "notes", runId: "notes-2" } });
await lease.transact(async (tx) => {
  await tx.workspace.apply({ put: { "a.md": "a", "b.md": "b" } });
  await tx.workspace.apply({ delete: ["b.md"], copy: { "c.md": { from: "a.md" } } });
  await tx.workspace.apply(
    { put: { "d.md": "d" } },
    { event: { kind: "draft.saved", step: 3 }, key: "draft:3" },
  );
});
const records = await lease.read(async (r) => (await r.journal.list()).map((e) => e.record));
console.log(records[0]); // {"kind":"workspace.apply","put":["a.md","b.md"],"delete":[]}
console.log(records[1]); // {"kind":"workspace.apply","put":[],"delete":["b.md"],"copy":["c.md"]}
console.log(records[2]); // {"kind":"draft.saved","step":3}
console.log((await lease.read((r) => r.journal.get("draft:3")))?.sequence); // 3
await lease.release();
await store.close();
