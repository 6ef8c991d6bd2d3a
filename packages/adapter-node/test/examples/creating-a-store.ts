import { nodeDriver } from "@runledger/adapter-node";
import { isRunledgerError, RunStore } from "@runledger/core";

let ids = 0;
const store = new RunStore({
  driver: nodeDriver(),
  durability: "full",
  busyTimeoutMs: 10_000,
  clock: () => 1_700_000_000_000,
  newId: () => `event-${++ids}`,
});
const lease = await store.open("audit-1.db", { create: { workflowId: "audit", runId: "audit-1" } });
const appended = await lease.transact((tx) => tx.journal.append({ kind: "started" }));
console.log(appended.eventId); // "event-1"
const [event] = await lease.read((r) => r.journal.list());
console.log(event?.writtenAt); // 1700000000000
await lease.release();
await store.close();

// A misspelt option is refused, never ignored.
const typo = { driver: nodeDriver(), idleRetentionMS: 1000 };
try {
  new RunStore(typo);
} catch (error) {
  if (!isRunledgerError(error, "invalid_argument")) throw error;
  console.log(error.details?.name); // "idleRetentionMS"
}
