/**
 * Helpers of the routing families (docs/routing.md): the builder spy and mutants,
 * the scenario staged on a format-3 datastore and committed into a real
 * commit log, and the end-to-end comparison — the documents a repository
 * wrote against what a read model caught up from the commit log. The
 * scenario itself, the route recorder and the in-memory vault live in
 * ./routing-scenario.ts (no test-runner import, so a child process runs
 * them too) and are re-exported here.
 */
import { existsSync } from "node:fs";
import { readFile } from "node:fs/promises";
import { fileURLToPath } from "node:url";
import {
  type CommitLog,
  type CommitResult,
  type CommitUnit,
  type ReadModel,
  type RunTarget,
  runPartition,
  type TypedChange,
  type UnitOptions,
} from "@runledger/core/commit-log";
import {
  type BuilderName,
  bindUnit,
  CHANGE_BUILDERS,
  type ChangeBuilders,
  type Datastore,
  DatastoreStore,
  signalChange,
  splitDocumentPath,
  stageTyped,
  type VaultProvider,
} from "@runledger/core/datastore";
import { onTestFinished } from "vitest";
import type { RoutingPeerReport, RoutingPeerRequest } from "../child/routing-peer-protocol.js";
import { type Fixtures, oneShot } from "../fixtures.js";
import { logStore, modelContents, newModel } from "./commit-log-fixtures.js";
import { RouteRecorder, runScenario } from "./routing-scenario.js";

export { MemoryVault, RouteRecorder, runScenario, SECRET_VALUES } from "./routing-scenario.js";

/** The route recording of the scenario on format 2, committed (the gate's golden file). */
export const ROUTING_GOLDEN = fileURLToPath(
  new URL("../golden/routing-v2.golden.json", import.meta.url),
);

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

export function datastoreStore(fx: Fixtures): DatastoreStore {
  const store = new DatastoreStore({ driver: fx.driver(), busyTimeoutMs: 2_000 });
  onTestFinished(() => store.close());
  return store;
}

export interface V3Outcome {
  readonly datastore: Datastore;
  readonly model: ReadModel;
  readonly result: CommitResult;
  readonly recorder: RouteRecorder;
  readonly locations: string[];
}

export interface ScenarioOptions {
  readonly namespace?: string;
  readonly builders?: Partial<ChangeBuilders>;
  readonly vault?: VaultProvider;
  /** Options of the unit the scenario stages into (spillOps, say). */
  readonly unit?: UnitOptions;
  /** Open the datastore with `initialize: { log }` (its default vault config committed first). */
  readonly initialize?: boolean;
}

/** The scenario staged on a new format-3 datastore into a unit that is not committed yet. */
export interface StagedScenario {
  readonly datastore: Datastore;
  readonly recorder: RouteRecorder;
  readonly log: CommitLog;
  readonly unit: CommitUnit;
  /** The datastore's location, then the log's. */
  readonly locations: string[];
  /** Closes the datastore's and the log's stores (closing again when the test ends is harmless). */
  close(): Promise<void>;
}

export async function stageScenarioOnV3(
  fx: Fixtures,
  options: ScenarioOptions = {},
): Promise<StagedScenario> {
  const recorder = new RouteRecorder();
  const location = fx.location();
  const logLocation = fx.location();
  const logs = logStore(fx);
  const log = await logs.open(logLocation, { create: true });
  const store = datastoreStore(fx);
  const datastore = await store.open(location, {
    create: { format: 3 },
    observer: recorder,
    ...(options.namespace === undefined ? {} : { namespace: options.namespace }),
    ...(options.initialize === true ? { initialize: { log } } : {}),
  });
  const unit = await log.begin(options.unit ?? {});
  const unbind = bindUnit(datastore.hook, unit);
  try {
    await runScenario(datastore, options);
  } finally {
    unbind();
  }
  const close = async () => {
    await store.close();
    await logs.close();
  };
  return { datastore, recorder, log, unit, locations: [location, logLocation], close };
}

/** The scenario committed and caught up into a new read model; `close` closes all three stores. */
export interface V3Run extends V3Outcome {
  readonly log: CommitLog;
  close(): Promise<void>;
}

/** The scenario on a new format-3 datastore under one unit, committed, caught up into a read model. */
export async function runScenarioOnV3(fx: Fixtures, options: ScenarioOptions = {}): Promise<V3Run> {
  const staged = await stageScenarioOnV3(fx, options);
  const result = await staged.unit.commit();
  const { store, model, location: modelLocation } = await newModel(fx);
  await model.catchUp(staged.log);
  return {
    datastore: staged.datastore,
    model,
    result,
    recorder: staged.recorder,
    log: staged.log,
    locations: [...staged.locations, modelLocation],
    close: async () => {
      await staged.close();
      await store.close();
    },
  };
}

/**
 * Every way the read model differs from the documents the repository
 * wrote: a key only on one side, different bytes, a catalog digest that is
 * not the document's, a catalog intent that is not the last one staged for
 * the key, or a partition the unit refused. Empty when they are equal.
 */
export async function differences(
  outcome: Omit<V3Outcome, "result" | "locations"> & {
    readonly result?: CommitResult;
    readonly locations?: readonly string[];
  },
): Promise<string[]> {
  const found: string[] = [];
  for (const refused of outcome.result?.refused ?? []) {
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

/** Paths whose document the read model lacks, holds alone, or holds with other bytes. */
export async function differingPaths(datastore: Datastore, model: ReadModel): Promise<string[]> {
  const written = new Map(
    (await datastore.documents()).map((document) => [document.path, document.bytes]),
  );
  const { documents } = await modelContents(model);
  const caught = new Map(documents.map((d) => [`${d.partition}/${d.key}`, d.bytes]));
  const paths = new Set([...written.keys(), ...caught.keys()]);
  return [...paths]
    .filter((path) => {
      const mine = written.get(path);
      const theirs = caught.get(path);
      return mine === undefined || theirs === undefined || !Buffer.from(mine).equals(theirs);
    })
    .sort();
}

/**
 * Saves snapshots of a run as `runs.saveSnapshot` of new ids would, but in
 * one datastore write: each document written with its route-1 signal, then
 * their typed changes — the repository's own builder's, one change per
 * snapshot, in order — staged through the route in one call. Only a fast
 * way to reach more than MAX_COMMIT_OPS snapshots.
 */
export async function seedSnapshots(
  datastore: Datastore,
  run: RunTarget,
  ids: readonly string[],
  content: (id: string) => string,
): Promise<void> {
  const hook = datastore.hook;
  const partition = runPartition(run.workflowId, run.runId);
  await datastore.write("run-snapshots.save", async (writer) => {
    const saved: { key: string; bytes: Uint8Array }[] = [];
    for (const id of ids) {
      const key = `snapshots/${id}.json`;
      const path = `${partition}/${key}`;
      const bytes = new TextEncoder().encode(content(id));
      await writer.put(path, bytes);
      await signalChange(hook, { kind: "write", path }, { typed: true });
      saved.push({ key, bytes });
    }
    await stageTyped(hook, () =>
      saved.flatMap(({ key, bytes }) => CHANGE_BUILDERS.snapshotSave(run, key, bytes, undefined)),
    );
  });
}

/**
 * Scans every byte of each location's files (the database and whichever of
 * its -wal, -shm, -journal exist) for each needle: `found` says which needle
 * is in which file (empty, we expect); `bytes` holds each location's files
 * concatenated, for the control that the scan read real content.
 */
export async function scanDatabaseFiles(
  locations: readonly string[],
  needles: readonly string[],
): Promise<{ found: string[]; bytes: Map<string, Buffer> }> {
  const found: string[] = [];
  const bytes = new Map<string, Buffer>();
  for (const location of locations) {
    const files = databaseFiles(location);
    const contents = await Promise.all(files.map((file) => readFile(file)));
    files.forEach((file, i) => {
      for (const needle of needles) {
        if (contents[i]!.includes(Buffer.from(needle))) found.push(`${needle} in ${file}`);
      }
    });
    bytes.set(location, Buffer.concat(contents));
  }
  return { found, bytes };
}

/** A database's files that exist now: the file, and its -wal, -shm and -journal. */
export function databaseFiles(location: string): string[] {
  return ["", "-wal", "-shm", "-journal"]
    .map((suffix) => `${location}${suffix}`)
    .filter((file) => existsSync(file));
}

/**
 * Runs one routing peer process to completion with a peer's driver: it runs
 * the scenario on a new format-3 datastore, commits, reports and exits.
 */
export const runRoutingPeer = oneShot<RoutingPeerRequest, RoutingPeerReport>(
  { file: "routing-peer", name: "routing peer" },
  120_000,
);
