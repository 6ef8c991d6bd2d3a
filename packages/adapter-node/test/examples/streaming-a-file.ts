import { nodeDriver } from "@runledger/adapter-node";
import { RunStore } from "@runledger/core";

const store = new RunStore({ driver: nodeDriver() });
const lease = await store.open("media-1.db", { create: { workflowId: "media", runId: "media-1" } });
// Content may arrive as a stream too: it is stored piece by piece, never whole in memory.
async function* recording() {
  for (let second = 0; second < 3; second++) yield new Uint8Array(200_000).fill(second);
}
await lease.transact((tx) => tx.workspace.apply({ put: { "take-1.raw": recording() } }));
const sizes = await lease.read(async (r) => {
  const pieces: number[] = [];
  for await (const piece of r.workspace.stream("take-1.raw")) pieces.push(piece.length);
  return pieces;
});
console.log(sizes); // [262144,262144,75712]
await lease.release();
await store.close();
