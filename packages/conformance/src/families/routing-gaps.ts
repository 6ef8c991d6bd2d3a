/**
 * Routing family, beyond the gate (docs/routing.md): four rules
 * the gate (./routing.ts) does not prove, proved here through the
 * repositories and the route on a format-3 datastore, not the log alone:
 * - hold-back: a run unit whose data partition the log refuses lands none
 *   of its run partition, and says so (`held_back`, naming the refusal);
 * - GC, and supersede, of more than MAX_COMMIT_OPS snapshots: per-key
 *   tombstones in commits of at most MAX_COMMIT_OPS, and a read model
 *   caught up from them holds none of the deleted keys;
 * - secrets at rest: no byte of the closed stores' files and no chunk holds
 *   a secret value; nor does the staging area of a unit not yet committed;
 * - across adapters: a scenario written through one adapter's repositories
 *   is caught up by the other adapter, in a child process, into the same
 *   documents and catalog rows — in both directions.
 */
import { readFile } from "node:fs/promises";
import {
  type CommitLog,
  type CommitResult,
  commitLogAccess,
  configPartition,
  definitionPartition,
  MAX_COMMIT_OPS,
  type ReadModel,
  type RunTarget,
  runPartition,
} from "@runledger/core/commit-log";
import {
  AutoDefinitionRepository,
  bindUnit,
  type Datastore,
  DefinitionRepository,
  WorkflowRunRepository,
  withRunUnit,
} from "@runledger/core/datastore";
import { describe, expect, it } from "vitest";
import { type Fixtures, sha256Hex } from "../fixtures.js";
import {
  logStore,
  modelContents,
  modelStore,
  newLog,
  newModel,
  runLogPeer,
} from "./commit-log-fixtures.js";
import {
  databaseFiles,
  datastoreStore,
  differences,
  differingPaths,
  MemoryVault,
  RouteRecorder,
  runRoutingPeer,
  runScenarioOnV3,
  SECRET_VALUES,
  scanDatabaseFiles,
  seedSnapshots,
  stageScenarioOnV3,
} from "./routing-fixtures.js";

const SECRETS = SECRET_VALUES.map((secret) => Buffer.from(secret));

/** The secrets found in `bytes` (none, we expect). */
function secretsIn(bytes: Uint8Array): string[] {
  const buffer = Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  return SECRET_VALUES.filter((_, i) => buffer.includes(SECRETS[i]!));
}

/** A stored value as bytes: text as UTF-8, blobs as they are; numbers and NULL hold no secret. */
function valueBytes(value: unknown): Uint8Array | undefined {
  if (typeof value === "string") return Buffer.from(value);
  if (value instanceof Uint8Array) return value;
  return undefined;
}

/** Sorts rows by their document path, `partition/key`. */
function byPath<T extends { partition: string; key: string }>(rows: readonly T[]): T[] {
  return [...rows].sort((a, b) =>
    Buffer.compare(Buffer.from(`${a.partition}/${a.key}`), Buffer.from(`${b.partition}/${b.key}`)),
  );
}

/** Snapshots a seeded run holds: two more than fit one commit. */
const SEEDED = MAX_COMMIT_OPS + 2;

interface SeededRun {
  readonly datastore: Datastore;
  readonly recorder: RouteRecorder;
  readonly runs: WorkflowRunRepository;
  readonly log: CommitLog;
  readonly model: ReadModel;
  readonly run: RunTarget;
  readonly partition: string;
  /** The snapshots' keys, in key order. */
  readonly keys: readonly string[];
}

/** A format-3 run with SEEDED snapshots, committed, and a read model caught up with it. */
async function seededRun(fx: Fixtures, runId: string): Promise<SeededRun> {
  const recorder = new RouteRecorder();
  const datastore = await datastoreStore(fx).open(fx.location(), {
    create: { format: 3 },
    observer: recorder,
  });
  const runs = new WorkflowRunRepository(datastore);
  const { log } = await newLog(fx);
  const { model } = await newModel(fx);
  const run = { workflowId: "nightly", runId };
  const ids = Array.from({ length: SEEDED }, (_, i) => `s${String(i).padStart(5, "0")}`);
  const seed = await log.begin();
  const unbind = bindUnit(datastore.hook, seed);
  try {
    await runs.create(run, { status: "running" });
    await seedSnapshots(datastore, run, ids, (id) => `{"run":"${runId}","at":"${id}"}`);
  } finally {
    unbind();
  }
  expect((await seed.commit()).refused).toEqual([]);
  expect((await model.catchUp(log)).ops).toBe(SEEDED + 1);
  const partition = runPartition(run.workflowId, runId);
  const keys = ids.map((id) => `snapshots/${id}.json`);
  return { datastore, recorder, runs, log, model, run, partition, keys };
}

/**
 * The bulk operation's unit committed `commits` (intent, op count) in the
 * run's partition and nothing else; every delete commit holds only per-key
 * tombstones expecting "present", whose keys in order are `deleted`; a read
 * model caught up incrementally holds none of them, only `kept`, and equals
 * the documents (bytes, digests, last intents).
 */
async function expectBulkTombstones(
  seeded: SeededRun,
  result: CommitResult,
  expected: {
    commits: readonly (readonly [string, number])[];
    deleted: readonly string[];
    kept: readonly string[];
  },
): Promise<void> {
  const { log, model, partition } = seeded;
  expect(result.refused).toEqual([]);
  expect(result.committed.map((p) => p.partition)).toEqual([partition]);
  const commits = result.committed[0]!.commits;
  expect(commits.map((c) => [c.intent, c.opCount])).toEqual(expected.commits);
  const tombstoned: string[] = [];
  for (const commit of commits) {
    const ops = await log.read((r) => r.ops(commit.commitId));
    expect(ops.length).toBe(commit.opCount);
    expect(ops.length).toBeLessThanOrEqual(MAX_COMMIT_OPS);
    if (commit.intent !== "run-snapshot.delete") continue;
    expect(ops.filter((op) => op.op !== "tombstone" || op.expect !== "present")).toEqual([]);
    tombstoned.push(...ops.map((op) => op.key));
  }
  expect(tombstoned).toEqual(expected.deleted);

  expect((await model.catchUp(log)).commits).toBe(commits.length);
  const { catalog, documents } = await modelContents(model);
  const deleted = new Set(expected.deleted);
  const remaining = [...catalog, ...documents].filter((row) => row.partition === partition);
  expect(remaining.filter((row) => deleted.has(row.key))).toEqual([]);
  expect(catalog.map((row) => `${row.partition}/${row.key}`).sort()).toEqual(
    expected.kept.map((key) => `${partition}/${key}`),
  );
  expect((await log.read((r) => r.liveKeys(partition))).map((k) => k.key)).toEqual(expected.kept);
  const outcome = { ...seeded, result, locations: [] };
  expect(await differences(outcome)).toEqual([]);
}

export function describeRoutingGaps(fx: Fixtures): void {
  describe("routing v3: hold-back, bulk tombstones, secrets at rest, across adapters", () => {
    it("hold-back through the route: when the log refuses a run unit's definition edit, the run's partition lands nothing and is reported held_back", async () => {
      const store = datastoreStore(fx);
      const location = fx.location();
      const mine = await store.open(location, { create: { format: 3 } });
      // A second handle of the same datastore: another writer, with a hook of its own.
      const other = await store.open(location);
      expect(other.format).toBe(3);
      const { log } = await newLog(fx);
      const run = { workflowId: "nightly", runId: "r1" };
      const runPart = runPartition(run.workflowId, run.runId);
      const modelPart = configPartition("model", "m1");
      const runs = new WorkflowRunRepository(mine);
      const models = new DefinitionRepository(mine, "model");
      const v1 = '{"model":"m1","v":1}';
      const v2 = '{"model":"m1","v":2}';
      const theirs = '{"model":"m1","v":"theirs"}';

      // Landed first: the run's record and the model's definition.
      const seed = await log.begin();
      const unbindSeed = bindUnit(mine.hook, seed);
      await runs.create(run, { status: "pending" });
      await models.create("m1", v1);
      unbindSeed();
      expect((await seed.commit()).refused).toEqual([]);
      const landedRecord = (await mine.documents()).find((d) => d.path === `${runPart}/run.json`);
      expect(landedRecord).toBeDefined();

      // The other writer edits the model (staged: expect v1); its unit is not committed yet.
      const otherUnit = await log.begin();
      const unbindOther = bindUnit(other.hook, otherUnit);
      await new DefinitionRepository(other, "model").edit("m1", theirs);
      unbindOther();

      // The run edits the model after it — the datastore holds the other writer's bytes, so
      // the run's edit expects them — and its unit commits first, against a log holding v1.
      const unit = await log.begin();
      const outcome = await withRunUnit(mine.hook, unit, async () => {
        await runs.update(run, { status: "running" });
        await models.edit("m1", v2);
        await new AutoDefinitionRepository(mine).save("a1", '{"auto":1}');
        await runs.saveSnapshot(run, "s1", '{"at":"s1"}');
        await runs.update(run, { status: "completed", model: sha256Hex(v2) });
        return { status: "completed" as const };
      });

      // The caller sees no error: the unit committed, and its result names what did not land.
      if (outcome.decision !== "committed") return expect.fail("an ended run's unit commits");
      expect(outcome.result.refused).toEqual([
        {
          partition: modelPart,
          reason: "expectation_failed",
          batches: [expect.any(Number)],
          failures: [
            {
              key: "definition.json",
              expected: `sha256:${sha256Hex(theirs)}`,
              found: `sha256:${sha256Hex(v1)}`,
            },
          ],
          failureCount: 1,
          heldBecause: [],
        },
        {
          partition: runPart,
          reason: "held_back",
          // run.update, run-snapshot.save, run.update: three batches, none landed.
          batches: [expect.any(Number), expect.any(Number), expect.any(Number)],
          failures: [],
          failureCount: 0,
          heldBecause: [modelPart],
        },
      ]);
      // Other data partitions still commit.
      expect(outcome.result.committed.map((p) => p.partition)).toEqual([definitionPartition("a1")]);

      // The log's run record stays at its last landed version; the held snapshot never landed.
      const runKeys = await log.read((r) => r.liveKeys(runPart));
      expect(runKeys.map((k) => [k.key, k.sha256, k.sequence])).toEqual([
        ["run.json", landedRecord!.sha256, 1],
      ]);
      expect((await log.read((r) => r.liveKey(modelPart, "definition.json")))?.sha256).toBe(
        sha256Hex(v1),
      );
      // Where the refusal and hold-back were, the documents were put back to the log's
      // versions (routing-reconcile.ts tests what follows), so a read model equals them.
      expect(outcome.result.reconciled).toEqual([
        { partition: modelPart, key: "definition.json", to: "log-version" },
        { partition: runPart, key: "run.json", to: "log-version" },
        { partition: runPart, key: "snapshots/s1.json", to: "absent" },
      ]);
      const { model } = await newModel(fx);
      await model.catchUp(log);
      expect(await differingPaths(mine, model)).toEqual([]);
      const record = await model.read((r) => r.document(runPart, "run.json"));
      expect(Buffer.from(record!).equals(Buffer.from(landedRecord!.bytes))).toBe(true);

      // Committing the done unit again answers the same: nothing held lands on a retry.
      const again = await unit.commit();
      expect(again.refused).toEqual(outcome.result.refused);
      expect(again.committed).toEqual(outcome.result.committed);
      expect((await log.read((r) => r.pendingUnits())).map((u) => u.txnId)).toEqual([
        otherUnit.txnId,
      ]);
      // The refused partition landed nothing: the other writer's edit, expecting v1, lands.
      const late = await otherUnit.commit();
      expect(late.refused).toEqual([]);
      expect(late.committed.map((p) => p.partition)).toEqual([modelPart]);
    });

    it("GC of more than MAX_COMMIT_OPS snapshots commits per-key tombstones in commits of at most MAX_COMMIT_OPS; the caught-up read model keeps none of the deleted keys and equals the documents", async () => {
      const seeded = await seededRun(fx, "gc");
      const outcome = await withRunUnit(
        seeded.datastore.hook,
        await seeded.log.begin(),
        async () => ({
          status: "completed" as const,
          deleted: await seeded.runs.collectSnapshots(seeded.run, { keep: 1 }),
        }),
      );
      if (outcome.decision !== "committed") return expect.fail("an ended run's unit commits");
      expect(outcome.value.deleted).toBe(SEEDED - 1);
      await expectBulkTombstones(seeded, outcome.result, {
        commits: [
          ["run-snapshot.delete", MAX_COMMIT_OPS],
          ["run-snapshot.delete", 1],
        ],
        deleted: seeded.keys.slice(0, -1),
        kept: ["run.json", seeded.keys[SEEDED - 1]!],
      });
    });

    it("supersede of more than MAX_COMMIT_OPS snapshots commits the save, then per-key tombstones in commits of at most MAX_COMMIT_OPS; the caught-up read model keeps none of the deleted keys and equals the documents", async () => {
      const seeded = await seededRun(fx, "supersede");
      const outcome = await withRunUnit(
        seeded.datastore.hook,
        await seeded.log.begin(),
        async () => ({
          status: "completed" as const,
          deleted: await seeded.runs.supersedeSnapshots(seeded.run, "zz-final", '{"final":true}'),
        }),
      );
      if (outcome.decision !== "committed") return expect.fail("an ended run's unit commits");
      expect(outcome.value.deleted).toBe(SEEDED);
      await expectBulkTombstones(seeded, outcome.result, {
        commits: [
          ["run-snapshot.save", 1],
          ["run-snapshot.delete", MAX_COMMIT_OPS],
          ["run-snapshot.delete", 2],
        ],
        deleted: seeded.keys,
        kept: ["run.json", "snapshots/zz-final.json"],
      });
    });

    fx.needs("files").it(
      "no secret value in any byte of the closed stores' files (incl. -wal/-shm) or in any chunk, though the documents naming the secrets are there",
      async () => {
        const vault = new MemoryVault();
        const outcome = await runScenarioOnV3(fx, { vault });
        expect(await differences(outcome)).toEqual([]);
        expect([...vault.secrets.values()].sort()).toEqual([...SECRET_VALUES].sort());
        // The control: the document naming the secrets, which the scan must see.
        const named = (await outcome.datastore.documents()).find(
          (d) => d.path === `${configPartition("vault", "v2")}/definition.json`,
        );
        expect(Buffer.from(named!.bytes).toString()).toContain('"token"');
        const namedBytes = Buffer.from(named!.bytes);
        await outcome.close();

        const scan = await scanDatabaseFiles(outcome.locations, SECRET_VALUES);
        const found = [...scan.found];
        for (const location of outcome.locations) {
          expect(scan.bytes.get(location)!.includes(namedBytes), `named in ${location}`).toBe(true);
        }
        // Every chunk of the log, read back after the scan of its files.
        const raw = await fx.open(outcome.locations[1]!, { create: false });
        const chunks = (await raw.execute("SELECT digest, data FROM chunk")).rows.map((row) =>
          Buffer.from(row.data as Uint8Array),
        );
        await raw.close();
        expect(chunks.length).toBeGreaterThanOrEqual(10);
        expect(chunks.some((chunk) => chunk.equals(namedBytes))).toBe(true);
        chunks.forEach((chunk, i) => {
          for (const secret of secretsIn(chunk)) found.push(`${secret} in chunk ${i}`);
        });
        expect(found).toEqual([]);
      },
    );

    fx.needs("files").it(
      "no secret value in the commit log's staging area while a unit has spilled the scenario and not committed",
      async () => {
        const vault = new MemoryVault();
        const staged = await stageScenarioOnV3(fx, { vault, unit: { spillOps: 8 } });
        const { unit, log } = staged;
        // Listing the staged ops spills what the buffer still holds: all of it is on disk now.
        let stagedOps = 0;
        for await (const _ of unit.stagedOps()) stagedOps++;
        expect(unit.buffered).toBe(0);
        expect(unit.state).toBe("staging");
        const byRoute = staged.recorder.records.filter((r) => r.route === "stage" && "op" in r);
        expect(stagedOps).toBe(byRoute.length);
        expect((await log.read((r) => r.info())).lastCommitId).toBe(0);
        expect((await log.read((r) => r.pendingUnits())).map((u) => [u.txnId, u.state])).toEqual([
          [unit.txnId, "staging"],
        ]);
        const named = (await staged.datastore.documents()).find(
          (d) => d.path === `${configPartition("vault", "v2")}/definition.json`,
        );
        const namedBytes = Buffer.from(named!.bytes);

        // The staging area's rows, every value of every column.
        const tables = ["unit", "unit_batch", "staged_op", "staged_content"];
        const area = await commitLogAccess(log).read(async (reader) => {
          const rows: { table: string; row: Record<string, unknown> }[] = [];
          for (const table of tables) {
            for (const row of (await reader.execute(`SELECT * FROM ${table}`)).rows) {
              rows.push({ table, row });
            }
          }
          const chunks = Number(
            (await reader.execute("SELECT count(*) AS n FROM chunk")).rows[0]!.n,
          );
          return { rows, chunks };
        });
        expect(area.chunks).toBe(0);
        const contents = area.rows
          .filter((r) => r.table === "staged_content")
          .map((r) => Buffer.from(r.row.data as Uint8Array));
        expect(contents.some((content) => content.equals(namedBytes))).toBe(true);
        expect(area.rows.filter((r) => r.table === "staged_op").length).toBe(stagedOps);
        const found: string[] = [];
        for (const { table, row } of area.rows) {
          for (const [column, value] of Object.entries(row)) {
            const bytes = valueBytes(value);
            if (bytes === undefined) continue;
            for (const secret of secretsIn(bytes)) found.push(`${secret} in ${table}.${column}`);
          }
        }
        // And the log's files as they are now, with the staging area on disk.
        const files = databaseFiles(staged.locations[1]!);
        const bytes = await Promise.all(files.map((file) => readFile(file)));
        expect(Buffer.concat(bytes).includes(namedBytes)).toBe(true);
        files.forEach((file, i) => {
          for (const secret of secretsIn(bytes[i]!)) found.push(`${secret} in ${file}`);
        });
        expect(found).toEqual([]);

        // What was staged is the whole scenario: committed and caught up, it equals the documents.
        const result = await unit.commit();
        const { model } = await newModel(fx);
        await model.catchUp(log);
        const outcome = { ...staged, model, result, locations: [] };
        expect(await differences(outcome)).toEqual([]);
      },
    );

    for (const peer of fx.peers) {
      fx.needs("files", "peers").it(
        `a v3 scenario written here is caught up by ${peer.name} in a child process into the documents' bytes and catalog rows`,
        async () => {
          const outcome = await runScenarioOnV3(fx);
          expect(outcome.result.refused).toEqual([]);
          const here = await modelContents(outcome.model);
          const written = await outcome.datastore.documents();
          const intents = outcome.recorder.lastIntents();
          const [datastoreLocation, logLocation] = outcome.locations;
          await outcome.close();

          const modelLocation = fx.location();
          const there = await runLogPeer(peer, { log: logLocation!, readModel: modelLocation });
          expect(there.driver).not.toBe(fx.driver().name);
          expect(there.logId).toBe(outcome.log.logId);
          const caught = there.model!;
          expect(caught.appliedCommit).toBe(here.appliedCommit);
          // Catalog rows as a catch-up here makes them, each the document's digest and last intent.
          expect(byPath(caught.catalog)).toEqual(byPath(here.catalog));
          expect(
            byPath(caught.catalog).map((r) => [`${r.partition}/${r.key}`, r.sha256, r.intent]),
          ).toEqual(written.map((d) => [d.path, d.sha256, intents.get(d.path)]));
          expect(
            byPath(caught.documents).map((d) => [`${d.partition}/${d.key}`, d.sha256, d.size]),
          ).toEqual(written.map((d) => [d.path, d.sha256, d.bytes.byteLength]));
          // The read model the peer wrote, opened here: the very bytes the repositories wrote.
          const datastore = await datastoreStore(fx).open(datastoreLocation!);
          const model = await modelStore(fx).open(modelLocation);
          const reopened = { ...outcome, datastore, model, locations: [] };
          expect(await differences(reopened)).toEqual([]);
        },
      );

      fx.needs("files", "peers").it(
        `a namespaced v3 scenario written by ${peer.name} in a child process is caught up here into the documents' bytes and catalog rows`,
        async () => {
          const datastoreLocation = fx.location();
          const logLocation = fx.location();
          const written = await runRoutingPeer(peer, {
            datastore: datastoreLocation,
            log: logLocation,
            namespace: "team-a",
          });
          expect(written.driver).not.toBe(fx.driver().name);
          expect(written.result.refused).toEqual([]);
          const datastore = await datastoreStore(fx).open(datastoreLocation, {
            namespace: "team-a",
          });
          expect(datastore.format).toBe(3);
          expect((await datastore.documents()).length).toBe(written.documents);
          const log = await logStore(fx).open(logLocation);
          expect(log.logId).toBe(written.logId);
          const { model } = await newModel(fx);
          await model.catchUp(log);
          const recorder = new RouteRecorder();
          for (const [key, kind] of written.intents) {
            recorder.record({ route: "stage", caller: "", kind, key, op: "put" });
          }
          const result = written.result;
          expect(await differences({ datastore, model, result, recorder, locations: [] })).toEqual(
            [],
          );
          // The same scenario written here gives the same catalog and documents.
          const local = await runScenarioOnV3(fx, { namespace: "team-a" });
          expect(await modelContents(model)).toEqual(await modelContents(local.model));
        },
      );
    }
  });
}
