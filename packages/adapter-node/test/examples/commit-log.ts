import { nodeDriver } from "@runledger/adapter-node";
import { CommitLogStore, put, ReadModelStore, typedChange } from "@runledger/core/commit-log";

const driver = nodeDriver();
const logs = new CommitLogStore({ driver });
const log = await logs.open("commits.db", { create: true });
const unit = await log.begin();
await unit.stage(
  typedChange("definition.create", { kind: "model", name: "alpha" }, [
    put("definition.yaml", "steps: []", { expect: "absent" }),
  ]),
);
const result = await unit.commit();
console.log(result.refused.length); // 0 (no expectation failed)

const models = new ReadModelStore({ driver });
const model = await models.open("read-model.db", { create: true });
const caughtUp = await model.catchUp(log);
console.log(caughtUp.commits); // 1 (a second catch-up applies 0)
await model.release();
await log.release();
await Promise.all([logs.close(), models.close()]);
