import { nodeDriver } from "@runledger/adapter-node";
import { RunStore } from "@runledger/core";

const store = new RunStore({ driver: nodeDriver() });
const lease = await store.open("thread-7.db", {
  create: { workflowId: "chat", runId: "thread-7" },
});
await lease.transact(async (tx) => {
  for (const id of ["01", "02", "03"]) {
    await tx.journal.append({ kind: "checkpoint", id }, { key: `checkpoint:${id}` });
    await tx.journal.append({ kind: "write", id }, { key: `write:${id}` });
  }
});
await lease.read(async (r) => {
  const newest = await r.journal.list({ keyPrefix: "checkpoint:", order: "desc", limit: 1 });
  console.log(newest[0]?.record.id); // "03"
  const before = newest[0]?.sequence ?? 1;
  const older = await r.journal.list({ keyPrefix: "checkpoint:", order: "desc", before });
  console.log(older.map((event) => event.record.id)); // ["02","01"]
  console.log((await r.journal.get("write:02"))?.sequence); // 4
  console.log((await r.journal.get("write:04")) === undefined); // true
});
await lease.release();
await store.close();
