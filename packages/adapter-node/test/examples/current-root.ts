import { nodeDriver } from "@runledger/adapter-node";
import { EMPTY_ROOT_ID, RunStore } from "@runledger/core";

const store = new RunStore({ driver: nodeDriver() });
const lease = await store.open("site-1.db", { create: { workflowId: "sites", runId: "site-1" } });
const empty = await lease.read((r) => r.workspace.currentRoot());
console.log(empty === EMPTY_ROOT_ID); // true (a new run's workspace is empty)
const built = await lease.transact((tx) => tx.workspace.apply({ put: { "index.html": "<h1>" } }));
await lease.transact((tx) => tx.journal.append({ kind: "deployed" })); // an append keeps the root
const current = await lease.read((r) => r.workspace.currentRoot());
console.log(current === built.rootId); // true
await lease.release();
await store.close();
