/**
 * The routing scenario and what it needs, with no test-runner import, so
 * that a child process (child/routing-peer.ts) runs the very scenario the
 * routing families run in the suite's process: the route recorder, a vault
 * provider that keeps secrets in memory, the secret values, and the
 * scenario that makes every repository write once or more.
 *
 * The scenario is fixed: its route-1/route-2 recording on format 2 is the
 * committed golden file, so any change in what format 2 writes, signals
 * or reads shows up as a diff.
 */
import {
  AutoDefinitionRepository,
  type ChangeBuilders,
  type Datastore,
  DefinitionRepository,
  EvaluatedDefinitionRepository,
  type RouteObserver,
  type RouteRecord,
  VaultConfigRepository,
  type VaultProvider,
  WorkflowRunRepository,
} from "@runledger/core/datastore";

/** Records every route-1 signal, route-2 call and op, and document read, with its caller. */
export class RouteRecorder implements RouteObserver {
  readonly records: RouteRecord[] = [];

  record(entry: RouteRecord): void {
    this.records.push(entry);
  }

  /** The intent that last staged each `partition/key`. */
  lastIntents(): Map<string, string> {
    const intents = new Map<string, string>();
    for (const entry of this.records) {
      if (entry.route === "stage" && "key" in entry) intents.set(entry.key, entry.kind);
    }
    return intents;
  }
}

export class MemoryVault implements VaultProvider {
  readonly secrets = new Map<string, string>();
  async store(vault: string, secret: string, value: string) {
    this.secrets.set(`${vault}\u0000${secret}`, value);
  }
  async read(vault: string, secret: string) {
    return this.secrets.get(`${vault}\u0000${secret}`);
  }
  async remove(vault: string, secret: string) {
    this.secrets.delete(`${vault}\u0000${secret}`);
  }
}

export const SECRET_VALUES = ["s3cr3t-token-Quokka-7781", "another-Wombat-secret-0099"];

/** Every repository write, each operation at least once, every builder at least once. */
export async function runScenario(
  datastore: Datastore,
  options: { builders?: Partial<ChangeBuilders>; vault?: VaultProvider } = {},
): Promise<void> {
  const repo = { builders: options.builders ?? {} };
  const runs = new WorkflowRunRepository(datastore, repo);
  const models = new DefinitionRepository(datastore, "model", repo);
  const workflows = new DefinitionRepository(datastore, "workflow", repo);
  const evaluated = new EvaluatedDefinitionRepository(datastore, repo);
  const auto = new AutoDefinitionRepository(datastore, repo);
  const vaults = new VaultConfigRepository(datastore, options.vault ?? new MemoryVault(), repo);
  const r1 = { workflowId: "nightly", runId: "r1" };
  const r2 = { workflowId: "nightly", runId: "r2" };

  await runs.create(r1, { status: "running" });
  await runs.update(r1, { status: "running", step: 1 });
  for (const id of ["s001", "s002", "s003", "s004"])
    await runs.saveSnapshot(r1, id, `{"at":"${id}"}`);
  await runs.saveSnapshot(r1, "s004", '{"at":"s004","again":true}');
  await runs.deleteSnapshot(r1, "s001");
  await runs.collectSnapshots(r1, { keep: 1 });
  await runs.supersedeSnapshots(r1, "s005", '{"at":"s005"}');
  await runs.update(r1, { status: "completed" });
  await runs.create(r2, { status: "running" });
  await runs.saveSnapshot(r2, "s001", "{}");
  await runs.delete(r2);

  await models.create("m1", '{"model":"m1"}');
  await models.edit("m1", '{"model":"m1","v":2}');
  await evaluated.save("m1", '{"evaluated":1}');
  await evaluated.save("m1", '{"evaluated":2}');
  await models.create("m2", '{"model":"m2"}');
  await evaluated.save("m2", '{"evaluated":"m2"}');
  await models.delete("m2");
  await models.create("m3", '{"model":"m3"}');
  await evaluated.save("m3", '{"evaluated":"m3"}');
  await evaluated.delete("m3");

  await workflows.create("w1", '{"workflow":"w1"}');
  await workflows.saveEvaluatedWorkflow("w1", '{"steps":[1]}');
  await workflows.edit("w1", '{"workflow":"w1","v":2}');
  await workflows.rename("w1", "w2");
  await workflows.saveEvaluatedWorkflow("w2", '{"steps":[1,2]}');
  await workflows.saveEvaluatedWorkflow("w2", '{"steps":[1,2,3]}');
  await workflows.create("w3", '{"workflow":"w3"}');
  await workflows.saveEvaluatedWorkflow("w3", '{"steps":[]}');
  await workflows.deleteEvaluatedWorkflow("w3");

  await auto.save("a1", '{"auto":1}');
  await auto.save("a1", '{"auto":2}');
  await auto.save("a2", '{"auto":"a2"}');

  await vaults.save("v1", {
    type: "local_encryption",
    settings: { keyFile: ".keys/v1" },
    secrets: { token: SECRET_VALUES[0]! },
  });
  await vaults.save("v1", {
    type: "local_encryption",
    settings: { keyFile: ".keys/v1", rotated: true },
    secrets: { token: SECRET_VALUES[0]!, other: SECRET_VALUES[1]! },
  });
  await vaults.rename("v1", "v2");
  await vaults.save("v3", {
    type: "local_encryption",
    settings: {},
    secrets: { x: SECRET_VALUES[1]! },
  });
  await vaults.delete("v3");
}
