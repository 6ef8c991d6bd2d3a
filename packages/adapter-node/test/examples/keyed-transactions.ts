import { nodeDriver } from "@runledger/adapter-node";
import { isRunledgerError, RunStore, type RunTransaction } from "@runledger/core";

const store = new RunStore({ driver: nodeDriver() });
const lease = await store.open("order-7.db", {
  create: { workflowId: "orders", runId: "order-7" },
});
const charge = (tx: RunTransaction) => tx.journal.append({ kind: "charged", cents: 1200 });
for (let attempt = 1; ; attempt++) {
  try {
    await lease.transact(charge, { key: "charge-1" });
    console.log(attempt); // 1
    break;
  } catch (error) {
    if (isRunledgerError(error, "already_landed")) break;
    if (isRunledgerError(error, "commit_unknown") && attempt < 5) continue;
    throw error;
  }
}
try {
  await lease.transact(charge, { key: "charge-1" });
} catch (error) {
  if (!isRunledgerError(error, "already_landed")) throw error;
  console.log(error.details?.firstSequence); // 1
}
console.log((await lease.read((r) => r.journal.list())).length); // 1
await lease.release();
await store.close();
