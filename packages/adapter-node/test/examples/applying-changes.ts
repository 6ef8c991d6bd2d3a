import { nodeDriver } from "@runledger/adapter-node";
import { isRunledgerError, RunStore } from "@runledger/core";

const store = new RunStore({ driver: nodeDriver() });
const lease = await store.open("thread-8.db", {
  create: { workflowId: "chat", runId: "thread-8" },
});
const first = await lease.transact((tx) =>
  tx.workspace.apply({ put: { "messages/0001.json": '{"role":"user"}', "state.json": "{}" } }),
);
// A new root from the first one: the messages by reference, one new message, a new state.
await lease.transact((tx) =>
  tx.workspace.apply(
    {
      copy: { messages: { from: "messages", at: { sequence: first.sequence } } },
      put: { "messages/0002.json": '{"role":"ai"}', "state.json": '{"turn":2}' },
    },
    { expect: { "messages/0002.json": "absent" } },
  ),
);
const names = await lease.read(async (r) =>
  (await r.workspace.list("messages")).map((e) => e.name),
);
console.log(names); // ["0001.json","0002.json"]
try {
  await lease.transact((tx) =>
    tx.workspace.apply(
      { put: { "messages/0002.json": "{}" } },
      { expect: { "messages/0002.json": "absent" } },
    ),
  );
} catch (error) {
  if (!isRunledgerError(error, "expectation_failed")) throw error;
  console.log(error.code); // "expectation_failed" (nothing was written)
}
await lease.transact((tx) => tx.workspace.apply({ delete: ["draft.json"] }, { missing: "ignore" }));
const draft = await lease.read((r) => r.workspace.stat("draft.json", { missing: "undefined" }));
console.log(draft === undefined); // true
await lease.release();
await store.close();
