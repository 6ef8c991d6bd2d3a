import { nodeDriver } from "@runledger/adapter-node";
import { RunStore } from "@runledger/core";

const store = new RunStore({ driver: nodeDriver() });
const lease = await store.open("stream-1.db", { create: { workflowId: "llm", runId: "stream-1" } });
await lease.transact(async (tx) => {
  for (let i = 1; i <= 1000; i++) await tx.journal.append({ kind: "token", i });
});
const seen = await lease.read(async (r) => {
  let count = 0;
  let last = 0;
  for await (const event of r.journal.stream({ after: 100, pageSize: 250 })) {
    count++;
    last = event.sequence;
  }
  return [count, last];
});
console.log(seen); // [900,1000]
await lease.release();
await store.close();
