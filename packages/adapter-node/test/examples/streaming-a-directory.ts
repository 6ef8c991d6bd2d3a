import { nodeDriver } from "@runledger/adapter-node";
import { RunStore } from "@runledger/core";

const store = new RunStore({ driver: nodeDriver() });
const lease = await store.open("inbox-1.db", { create: { workflowId: "mail", runId: "inbox-1" } });
const mail: Record<string, string> = {};
for (let i = 1; i <= 3000; i++) mail[`inbox/${String(i).padStart(5, "0")}.eml`] = `message ${i}`;
await lease.transact((tx) => tx.workspace.apply({ put: mail }));
const firstTen = await lease.read(async (r) => {
  const names: string[] = [];
  for await (const entry of r.workspace.entries("inbox")) {
    names.push(entry.name);
    if (names.length === 10) break; // the rest of the directory is never read
  }
  return names;
});
console.log(firstTen.at(-1)); // "00010.eml"
await lease.release();
await store.close();
