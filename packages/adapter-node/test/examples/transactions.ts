import { nodeDriver } from "@runledger/adapter-node";
import { RunStore } from "@runledger/core";

const store = new RunStore({ driver: nodeDriver() });
const lease = await store.open("invoice-3.db", {
  create: { workflowId: "invoices", runId: "invoice-3" },
});
const total = await lease.transact(async (tx) => {
  await tx.journal.append({ kind: "line", cents: 500 });
  await tx.journal.append({ kind: "line", cents: 700 });
  return 1200;
});
console.log(total); // 1200
try {
  await lease.transact(async (tx) => {
    await tx.journal.append({ kind: "line", cents: 900 });
    throw new Error("card declined");
  });
} catch (error) {
  console.log((error as Error).message); // "card declined"
}
console.log((await lease.read((r) => r.journal.list())).length); // 2 (the throw undid its append)
await lease.release();
await store.close();
