import { nodeDriver } from "@runledger/adapter-node";
import { RunStore } from "@runledger/core";

const store = new RunStore({ driver: nodeDriver() });
const lease = await store.open("chat-9.db", { create: { workflowId: "chat", runId: "chat-9" } });
const first = await lease.transact((tx) =>
  tx.workspace.apply({ put: { "messages/0.txt": "hi", "messages/1.txt": "hello" } }),
);
await lease.transact((tx) => tx.workspace.apply({ put: { "messages/2.txt": "bye" } }));
await lease.read(async (r) => {
  const paths = (await r.workspace.list("messages")).map((entry) => entry.path);
  const now = await r.workspace.readMany(paths);
  console.log(now.map((bytes) => new TextDecoder().decode(bytes))); // ["hi","hello","bye"]
  const then = await r.workspace.readMany(["messages/1.txt"], { root: first.rootId });
  console.log(new TextDecoder().decode(then[0])); // "hello"
});
await lease.release();
await store.close();
