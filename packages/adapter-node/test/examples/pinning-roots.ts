import { nodeDriver } from "@runledger/adapter-node";
import { RunStore } from "@runledger/core";

const store = new RunStore({ driver: nodeDriver() });
const lease = await store.open("model-6.db", {
  create: { workflowId: "models", runId: "model-6" },
});
const v1 = await lease.transact((tx) => tx.workspace.apply({ put: { "model.json": "v1" } }));
await lease.transact(async (tx) => {
  await tx.workspace.pin("release-1", { root: v1.rootId });
  await tx.workspace.apply({ put: { "model.json": "v2" } });
  await tx.workspace.pin("latest"); // the current root: v2's
});
const pins = await lease.read((r) => r.workspace.pins());
console.log(pins.map((pin) => pin.name)); // ["latest","release-1"]
// The event that named v1 pruned and garbage collected, the pinned root still reads.
await lease.transact(async (tx) => {
  await tx.workspace.prune({ before: 2 });
  await tx.workspace.collectGarbage();
});
const text = await lease.read((r) => r.workspace.read("model.json", { root: v1.rootId }));
console.log(new TextDecoder().decode(text)); // "v1"
console.log(await lease.transact((tx) => tx.workspace.unpin("release-1"))); // true
console.log(await lease.transact((tx) => tx.workspace.unpin("release-1"))); // false
await lease.release();
await store.close();
