import { nodeDriver } from "@runledger/adapter-node";
import { RunStore } from "@runledger/core";

const store = new RunStore({ driver: nodeDriver() });
const lease = await store.open("brand-1.db", { create: { workflowId: "brand", runId: "brand-1" } });
await lease.transact((tx) =>
  tx.workspace.apply({ put: { "img/logo.png": new Uint8Array([137, 80, 78, 71]) } }),
);
await lease.read(async (r) => {
  const file = await r.workspace.stat("img/logo.png");
  console.log([file.kind, file.size]); // ["file",4]
  console.log((await r.workspace.stat("img")).kind); // "directory"
  const icon = await r.workspace.stat("img/icon.png", { missing: "undefined" });
  console.log(icon === undefined); // true
});
await lease.release();
await store.close();
