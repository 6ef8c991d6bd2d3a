/**
 * Helpers of the routing family (spec §9): the route recorder, a vault
 * provider that keeps secrets in memory, the scenario that makes every
 * repository write once or more, and the end-to-end comparison — the
 * documents a repository wrote against what a read model caught up from
 * the commit log.
 *
 * The scenario is fixed: its route-1/route-2 recording on format 2 is the
 * committed golden file, so any change in what format 2 writes, signals
 * or reads shows up as a diff.
 */
import {
  AutoDefinitionRepository,
  type BuilderName,
  bindUnit,
  CHANGE_BUILDERS,
  type ChangeBuilders,
  type CommitResult,
  type Datastore,
  DatastoreStore,
  DefinitionRepository,
  EvaluatedDefinitionRepository,
  type ReadModel,
  type RouteObserver,
  type RouteRecord,
  splitDocumentPath,
  type TypedChange,
  VaultConfigRepository,
  type VaultProvider,
  WorkflowRunRepository,
} from "@runledger/core";
import { onTestFinished } from "vitest";
import type { Fixtures } from "../fixtures.js";
import { modelContents, newLog, newModel } from "./commit-log-fixtures.js";

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

/** Counts every builder call: the spy that proves builders never run on format 2. */
export function spyOnBuilders(): { builders: Partial<ChangeBuilders>; calls: Map<string, number> } {
  const calls = new Map<string, number>();
  const builders: Record<string, unknown> = {};
  for (const name of Object.keys(CHANGE_BUILDERS) as BuilderName[]) {
    const original = CHANGE_BUILDERS[name] as (...args: never[]) => TypedChange[];
    builders[name] = (...args: never[]) => {
      calls.set(name, (calls.get(name) ?? 0) + 1);
      return original(...args);
    };
  }
  return { builders: builders as Partial<ChangeBuilders>, calls };
}

/** One builder whose every output loses its last op (and a change left with none). */
export function reducedBuilder(name: BuilderName): Partial<ChangeBuilders> {
  const original = CHANGE_BUILDERS[name] as (...args: never[]) => TypedChange[];
  const reduced = (...args: never[]) => {
    const changes = [...original(...args)];
    const last = changes.pop();
    if (last !== undefined && last.ops.length > 1) {
      changes.push({ ...last, ops: last.ops.slice(0, -1) });
    }
    return changes;
  };
  return { [name]: reduced } as Partial<ChangeBuilders>;
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

export function datastoreStore(fx: Fixtures): DatastoreStore {
  const store = new DatastoreStore({ driver: fx.driver(), busyTimeoutMs: 2_000 });
  onTestFinished(() => store.close());
  return store;
}

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

export interface V3Outcome {
  readonly datastore: Datastore;
  readonly model: ReadModel;
  readonly result: CommitResult;
  readonly recorder: RouteRecorder;
  readonly locations: string[];
}

/** The scenario on a new format-3 datastore under one unit, committed, caught up into a read model. */
export async function runScenarioOnV3(
  fx: Fixtures,
  options: { namespace?: string; builders?: Partial<ChangeBuilders>; vault?: VaultProvider } = {},
): Promise<V3Outcome> {
  const recorder = new RouteRecorder();
  const location = fx.location();
  const datastore = await datastoreStore(fx).open(location, {
    create: { format: 3 },
    observer: recorder,
    ...(options.namespace === undefined ? {} : { namespace: options.namespace }),
  });
  const { log, location: logLocation } = await newLog(fx);
  const unit = await log.begin();
  const unbind = bindUnit(datastore.hook, unit);
  try {
    await runScenario(datastore, options);
  } finally {
    unbind();
  }
  const result = await unit.commit();
  const { model, location: modelLocation } = await newModel(fx);
  await model.catchUp(log);
  return { datastore, model, result, recorder, locations: [location, logLocation, modelLocation] };
}

/**
 * Every way the read model differs from the documents the repository
 * wrote: a key only on one side, different bytes, a catalog digest that is
 * not the document's, a catalog intent that is not the last one staged for
 * the key, or a partition the unit refused. Empty when they are equal.
 */
export async function differences(outcome: V3Outcome): Promise<string[]> {
  const found: string[] = [];
  for (const refused of outcome.result.refused) {
    found.push(`refused ${refused.partition}: ${refused.reason}`);
  }
  const written = new Map<string, { bytes: Uint8Array; sha256: string }>();
  for (const document of await outcome.datastore.documents()) {
    const { partition, key } = splitDocumentPath(document.path);
    written.set(`${partition}/${key}`, document);
  }
  const { catalog, documents } = await modelContents(outcome.model);
  const caught = new Map(documents.map((d) => [`${d.partition}/${d.key}`, d.bytes]));
  const intents = outcome.recorder.lastIntents();
  for (const [path, document] of written) {
    const bytes = caught.get(path);
    if (bytes === undefined) found.push(`missing from the read model: ${path}`);
    else if (!Buffer.from(document.bytes).equals(bytes)) found.push(`different bytes: ${path}`);
  }
  for (const path of caught.keys()) {
    if (!written.has(path)) found.push(`only in the read model: ${path}`);
  }
  for (const row of catalog) {
    const path = `${row.partition}/${row.key}`;
    const document = written.get(path);
    if (document === undefined) found.push(`catalog row without a document: ${path}`);
    else if (document.sha256 !== row.sha256) found.push(`catalog digest differs: ${path}`);
    if (intents.get(path) !== row.intent) {
      found.push(`catalog intent ${row.intent}, last staged ${intents.get(path)}: ${path}`);
    }
  }
  if (catalog.length !== caught.size) found.push("catalog and documents disagree in number");
  return found;
}
