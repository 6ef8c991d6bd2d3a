import { nodeDriver } from "@runledger/adapter-node";
import { isRunledgerError, RunStore } from "@runledger/core";

const store = new RunStore({ driver: nodeDriver() });
const lease = await store.open("crawl-2.db", { create: { workflowId: "crawl", runId: "crawl-2" } });
const failure = await lease.transact((tx) =>
  tx.journal.append({ kind: "step.failed", error: "timeout" }),
);
const interrupted = await lease.transact((tx) =>
  tx.run.stop({ status: "interrupted", reason: { host: "worker-3", code: "SIGTERM" } }),
);
console.log(interrupted.stopReason); // {"host":"worker-3","code":"SIGTERM"}
try {
  await lease.transact((tx) => tx.run.stop({ status: "suspended" }));
} catch (error) {
  if (!isRunledgerError(error, "run_not_running")) throw error;
  console.log(error.code); // "run_not_running" (a paused run stops only in a terminal status)
}
const failed = await lease.transact((tx) =>
  tx.run.stop({ status: "failed", reason: { event: failure.sequence } }),
);
console.log([failed.status, failed.stopReason]); // ["failed",{"event":1}]
try {
  await lease.transact((tx) => tx.run.stop({ status: "completed" }));
} catch (error) {
  if (!isRunledgerError(error, "run_finished")) throw error;
  console.log(error.code); // "run_finished"
}
await lease.release();
await store.close();
