import { nodeDriver } from "@runledger/adapter-node";
import { RunStore } from "@runledger/core";

const store = new RunStore({ driver: nodeDriver() });
const lease = await store.open("cart-4.db", { create: { workflowId: "carts", runId: "cart-4" } });
const kinds = await lease.transact(async (tx) => {
  await tx.journal.append({ kind: "order.placed" });
  try {
    await tx.savepoint(async (sp) => {
      await sp.journal.append({ kind: "coupon.applied" });
      throw new Error("coupon expired");
    });
  } catch {
    // Only the savepoint's writes were undone: the transaction goes on.
  }
  await tx.journal.append({ kind: "order.confirmed" });
  return (await tx.journal.list()).map((event) => event.record.kind);
});
console.log(kinds); // ["order.placed","order.confirmed"]
await lease.release();
await store.close();
