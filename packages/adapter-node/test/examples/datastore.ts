import { nodeDriver } from "@runledger/adapter-node";
import { CommitLogStore } from "@runledger/core/commit-log";
import { DatastoreStore, WorkflowRunRepository, withRunUnit } from "@runledger/core/datastore";

const driver = nodeDriver();
const datastores = new DatastoreStore({ driver });
const datastore = await datastores.open("data.db", { create: { format: 3 } });
const logs = new CommitLogStore({ driver });
const log = await logs.open("commits.db", { create: true });
const runs = new WorkflowRunRepository(datastore);
const run = { workflowId: "nightly", runId: "r1" };

// The run's writes stage typed changes into one unit, decided by how the run ends.
const outcome = await withRunUnit(datastore.hook, await log.begin(), async () => {
  await runs.create(run, { status: "running" });
  await runs.update(run, { status: "completed" });
  return { status: "completed" as const };
});
console.log(outcome.decision); // "committed"
await datastore.release();
await log.release();
await Promise.all([datastores.close(), logs.close()]);
