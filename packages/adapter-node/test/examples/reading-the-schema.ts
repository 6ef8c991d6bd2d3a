import { nodeDriver } from "@runledger/adapter-node";
import { APPLICATION_ID, RUN_SCHEMA_VERSION, RunStore } from "@runledger/core";

const store = new RunStore({ driver: nodeDriver() });
const lease = await store.open("probe-1.db", { create: { workflowId: "probe", runId: "probe-1" } });
const schema = await lease.read((r) => r.schema());
console.log(schema.applicationId === APPLICATION_ID); // true
console.log(schema.userVersion === RUN_SCHEMA_VERSION); // true
console.log(schema.journalMode); // "wal"
console.log(schema.objects.some((object) => object.name === "journal")); // true
await lease.release();
await store.close();
