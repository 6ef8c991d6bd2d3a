import { nodeDriver } from "@runledger/adapter-node";
import { isRunledgerError, RunStore } from "@runledger/core";

const store = new RunStore({ driver: nodeDriver() });
const lease = await store.open("poller-1.db", {
  create: { workflowId: "poll", runId: "poller-1" },
});
await lease.transact(async (tx) => {
  for (let step = 1; step <= 5; step++) await tx.journal.append({ kind: "tick", step });
});
console.log(await lease.transact((tx) => tx.workspace.prune({ before: 4 }))); // 3
const counts = await lease.read((r) => r.counts());
console.log([counts.events, counts.firstSequence]); // [2,4]
try {
  await lease.transact((tx) => tx.workspace.prune({ before: 6 }));
} catch (error) {
  if (!isRunledgerError(error, "invalid_argument")) throw error;
  console.log(error.code); // "invalid_argument" (the newest event, 5, is always kept)
}
console.log((await lease.verify()).ok); // true (the digest chain holds from event 4)
await lease.release();
await store.close();
