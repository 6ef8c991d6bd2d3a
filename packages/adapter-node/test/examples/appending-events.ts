import { nodeDriver } from "@runledger/adapter-node";
import { isRunledgerError, RunStore } from "@runledger/core";

const store = new RunStore({ driver: nodeDriver() });
const lease = await store.open("signup-5.db", {
  create: { workflowId: "signups", runId: "signup-5" },
});
const welcome = { kind: "email.sent", to: "ada@example.com" };
const first = await lease.transact((tx) => tx.journal.append(welcome, { key: "email:welcome" }));
console.log(first.sequence); // 1
// The same key and record again (a retried step): the first event, nothing written.
const again = await lease.transact((tx) => tx.journal.append(welcome, { key: "email:welcome" }));
console.log(again.eventId === first.eventId); // true
try {
  await lease.transact((tx) =>
    tx.journal.append({ kind: "email.sent", to: "bob@example.com" }, { key: "email:welcome" }),
  );
} catch (error) {
  if (!isRunledgerError(error, "idempotency_conflict")) throw error;
  console.log(error.details?.sequence); // 1
}
try {
  await lease.transact((tx) => tx.journal.append({ kind: "score", value: Number.NaN }));
} catch (error) {
  if (!isRunledgerError(error, "invalid_json")) throw error;
  console.log(error.code); // "invalid_json" (NaN is no JSON)
}
await lease.release();
await store.close();
