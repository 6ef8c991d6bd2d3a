/**
 * Routing family: reconciliation (docs/routing.md, docs/commit-log.md). On format 3
 * a repository writes its document first and stages the typed change; the
 * commit log is the source of truth. Where a staged change does not land —
 * its partition refused, its run partition held back, its unit abandoned —
 * the document is put back to what the log holds, so the datastore and the
 * log agree again: later writes (whose expectations come from the
 * datastore) land, and a caught-up read model equals the documents.
 *
 * - a refused partition: its documents are the log's versions again, a later
 *   edit lands, the read model equals the documents (bytes and catalog);
 * - a held-back run partition: the same, and marking the run failed in a new
 *   unit lands;
 * - an abandoned run unit (interrupted, or throwing): no document it created
 *   is left, the documents it changed or deleted are restored, and a retried
 *   `runs.create` works;
 * - each of these with the unit's staging spilled to the log's staging area;
 * - a format-2 datastore is never reconciled (nor can it be).
 */
import {
  type CommitLog,
  type CommitUnit,
  commitLogAccess,
  configPartition,
  definitionPartition,
  type ReadModel,
  type ReconciledKey,
  runPartition,
  type UnitOptions,
} from "@runledger/core/commit-log";
import {
  AutoDefinitionRepository,
  bindUnit,
  type Datastore,
  DefinitionRepository,
  EvaluatedDefinitionRepository,
  WorkflowRunRepository,
  withRunUnit,
} from "@runledger/core/datastore";
import { describe, expect, it } from "vitest";
import { type Fixtures, failureOf, sha256Hex } from "../fixtures.js";
import { modelContents, newLog, newModel } from "./commit-log-fixtures.js";
import { datastoreStore, differingPaths, runScenario } from "./routing-fixtures.js";

const WHERE = ["in the unit's buffer", "spilled to the staging area"] as const;
type Where = (typeof WHERE)[number];

const unitOptions = (where: Where): UnitOptions =>
  where === "spilled to the staging area" ? { spillOps: 1 } : {};

/** Rows the log's staging area holds for a unit (its spilled ops). */
async function spilledOps(log: CommitLog, unit: CommitUnit): Promise<number> {
  return commitLogAccess(log).read(async (reader) => {
    const { rows } = await reader.execute("SELECT count(*) AS n FROM staged_op WHERE txn_id = ?", [
      unit.txnId,
    ]);
    return Number(rows[0]!.n);
  });
}

/** The documents of one partition, as [key, sha256]. */
async function partitionDocuments(datastore: Datastore, partition: string) {
  return (await datastore.documents())
    .filter((d) => d.path.startsWith(`${partition}/`))
    .map((d) => [d.path.slice(partition.length + 1), d.sha256]);
}

/**
 * Every way the documents, the log's live keys and a read model caught up
 * from the log disagree: bytes (either side missing or different), catalog
 * digests, live-key digests. Empty when they are one state.
 */
async function disagreements(datastore: Datastore, log: CommitLog, model: ReadModel) {
  await model.catchUp(log);
  const found = (await differingPaths(datastore, model)).map((path) => `bytes: ${path}`);
  const documents = new Map((await datastore.documents()).map((d) => [d.path, d.sha256]));
  const { catalog } = await modelContents(model);
  const catalogued = new Map(catalog.map((row) => [`${row.partition}/${row.key}`, row.sha256]));
  const live = await log.read(async (reader) => {
    const keys = new Map<string, string>();
    for await (const key of reader.allLiveKeys())
      keys.set(`${key.partition}/${key.key}`, key.sha256);
    return keys;
  });
  for (const [path, sha256] of documents) {
    if (catalogued.get(path) !== sha256) found.push(`catalog: ${path}`);
    if (live.get(path) !== sha256) found.push(`live key: ${path}`);
  }
  for (const path of catalogued.keys())
    if (!documents.has(path)) found.push(`catalog only: ${path}`);
  for (const path of live.keys()) if (!documents.has(path)) found.push(`log only: ${path}`);
  return found.sort();
}

const byKey = (keys: readonly ReconciledKey[]) => [...keys];

const RUN = { workflowId: "nightly", runId: "r1" };
const RUN_PART = runPartition(RUN.workflowId, RUN.runId);
const MODEL_PART = configPartition("model", "m1");
const V1 = '{"model":"m1","v":1}';
const V2 = '{"model":"m1","v":2}';
const V3 = '{"model":"m1","v":3}';
const THEIRS = '{"model":"m1","v":"theirs"}';

/**
 * A format-3 datastore with two handles; m1 (v1) and the run's record
 * (pending) landed; another writer's edit of m1 staged (not committed) into
 * its own unit, so the datastore holds its bytes while the log holds v1: a
 * unit of `mine` that edits m1 now expects bytes the log never had, and is
 * refused when it commits first.
 */
async function contested(fx: Fixtures) {
  const store = datastoreStore(fx);
  const location = fx.location();
  const mine = await store.open(location, { create: { format: 3 } });
  const other = await store.open(location);
  const { log } = await newLog(fx);
  const runs = new WorkflowRunRepository(mine);
  const models = new DefinitionRepository(mine, "model");
  const seed = await log.begin();
  const unbindSeed = bindUnit(mine.hook, seed);
  await runs.create(RUN, { status: "pending" });
  await models.create("m1", V1);
  unbindSeed();
  expect((await seed.commit()).refused).toEqual([]);
  const landed = new Map((await mine.documents()).map((d) => [d.path, d.sha256]));

  const otherUnit = await log.begin();
  const unbindOther = bindUnit(other.hook, otherUnit);
  await new DefinitionRepository(other, "model").edit("m1", THEIRS);
  unbindOther();
  return { mine, log, runs, models, landed, otherUnit };
}

export function describeRoutingReconcile(fx: Fixtures): void {
  describe("routing v3: the datastore is reconciled to the commit log", () => {
    for (const where of WHERE) {
      it(`a refused partition's documents are put back to the log's versions (${where}); a later edit lands and the read model equals the documents`, async () => {
        const c = await contested(fx);
        const evaluated = new EvaluatedDefinitionRepository(c.mine);
        const unit = await c.log.begin(unitOptions(where));
        const unbind = bindUnit(c.mine.hook, unit);
        await c.models.edit("m1", V2);
        await evaluated.save("m1", '{"evaluated":1}');
        await new AutoDefinitionRepository(c.mine).save("a1", '{"auto":1}');
        unbind();
        if (where === "spilled to the staging area") {
          expect(await spilledOps(c.log, unit)).toBeGreaterThan(0);
        }
        const result = await unit.commit();
        expect(result.refused.map((r) => [r.partition, r.reason])).toEqual([
          [MODEL_PART, "expectation_failed"],
        ]);
        expect(result.committed.map((p) => p.partition)).toEqual([definitionPartition("a1")]);
        // Every key of the refused partition, back to what the log holds; nothing else.
        expect(byKey(result.reconciled)).toEqual([
          { partition: MODEL_PART, key: "definition.json", to: "log-version" },
          { partition: MODEL_PART, key: "evaluated-definition.json", to: "absent" },
        ]);
        expect(await partitionDocuments(c.mine, MODEL_PART)).toEqual([
          ["definition.json", sha256Hex(V1)],
        ]);
        expect(await c.mine.syncChanges(), "reconciling records no route-1 signal").toEqual([]);

        // The other writer gives up: its edit never lands, and its document is the log's too.
        expect((await c.otherUnit.abandon()).reconciled).toEqual([
          { partition: MODEL_PART, key: "definition.json", to: "log-version" },
        ]);
        // A later edit takes its expectation from the datastore — now the log's v1 — and lands.
        const next = await c.log.begin(unitOptions(where));
        const unbindNext = bindUnit(c.mine.hook, next);
        await c.models.edit("m1", V3);
        await evaluated.save("m1", '{"evaluated":2}');
        unbindNext();
        const landed = await next.commit();
        expect(landed.refused).toEqual([]);
        expect(landed.reconciled).toEqual([]);
        expect(landed.committed.map((p) => p.partition)).toEqual([MODEL_PART]);
        const { model } = await newModel(fx);
        expect(await disagreements(c.mine, c.log, model)).toEqual([]);
        expect((await c.models.get("m1"))?.length).toBe(V3.length);
      });

      it(`a held-back run partition's documents are put back to the log's versions (${where}); marking the run failed in a new unit lands, and the read model equals the documents`, async () => {
        const c = await contested(fx);
        const unit = await c.log.begin(unitOptions(where));
        const outcome = await withRunUnit(c.mine.hook, unit, async () => {
          await c.runs.update(RUN, { status: "running" });
          await c.models.edit("m1", V2);
          await new AutoDefinitionRepository(c.mine).save("a1", '{"auto":1}');
          await c.runs.saveSnapshot(RUN, "s1", '{"at":"s1"}');
          await c.runs.update(RUN, { status: "completed", model: sha256Hex(V2) });
          if (where === "spilled to the staging area") {
            expect(await spilledOps(c.log, unit)).toBeGreaterThan(0);
          }
          return { status: "completed" as const };
        });
        if (outcome.decision !== "committed") return expect.fail("an ended run's unit commits");
        expect(outcome.result.refused.map((r) => [r.partition, r.reason])).toEqual([
          [MODEL_PART, "expectation_failed"],
          [RUN_PART, "held_back"],
        ]);
        expect(byKey(outcome.result.reconciled)).toEqual([
          { partition: MODEL_PART, key: "definition.json", to: "log-version" },
          { partition: RUN_PART, key: "run.json", to: "log-version" },
          { partition: RUN_PART, key: "snapshots/s1.json", to: "absent" },
        ]);
        // The run's record is its last landed version again; the held snapshot is gone.
        expect(await partitionDocuments(c.mine, RUN_PART)).toEqual([
          ["run.json", c.landed.get(`${RUN_PART}/run.json`)],
        ]);
        expect(await c.runs.get(RUN)).toEqual({ status: "pending" });
        expect(await partitionDocuments(c.mine, MODEL_PART)).toEqual([
          ["definition.json", sha256Hex(V1)],
        ]);
        expect(await c.mine.syncChanges()).toEqual([]);
        await c.otherUnit.abandon();

        // What the caller does next: record the outcome in a new unit. It lands.
        const failed = await withRunUnit(c.mine.hook, await c.log.begin(), async () => {
          await c.models.edit("m1", V3);
          await c.runs.update(RUN, { status: "failed", refused: MODEL_PART });
          return { status: "failed" as const };
        });
        if (failed.decision !== "committed") return expect.fail("a failed run's unit commits");
        expect(failed.result.refused).toEqual([]);
        expect(failed.result.reconciled).toEqual([]);
        expect(failed.result.committed.map((p) => p.partition)).toEqual([MODEL_PART, RUN_PART]);
        expect(await c.runs.get(RUN)).toEqual({ status: "failed", refused: MODEL_PART });
        const { model } = await newModel(fx);
        expect(await disagreements(c.mine, c.log, model)).toEqual([]);
      });

      for (const ending of ["interrupted", "a throw"] as const) {
        it(`a run unit abandoned by ${ending} (${where}) leaves no document it created, restores those it changed or deleted, and a retried runs.create works`, async () => {
          const datastore = await datastoreStore(fx).open(fx.location(), {
            create: { format: 3 },
          });
          const { log } = await newLog(fx);
          const runs = new WorkflowRunRepository(datastore);
          const models = new DefinitionRepository(datastore, "model");
          const workflows = new DefinitionRepository(datastore, "workflow");
          const r0 = { workflowId: "nightly", runId: "r0" };
          const r0Part = runPartition(r0.workflowId, r0.runId);
          const seed = await log.begin();
          const unbindSeed = bindUnit(datastore.hook, seed);
          await runs.create(r0, { status: "running" });
          await runs.saveSnapshot(r0, "s0", '{"at":"s0"}');
          await models.create("m1", V1);
          await workflows.create("w1", '{"workflow":"w1"}');
          unbindSeed();
          expect((await seed.commit()).refused).toEqual([]);
          const before = await datastore.documents();

          const unit = await log.begin(unitOptions(where));
          const run = async () => {
            await runs.create(RUN, { status: "running" });
            await runs.update(r0, { status: "running", step: 2 });
            await runs.saveSnapshot(r0, "s1", '{"at":"s1"}');
            await runs.deleteSnapshot(r0, "s0");
            await models.edit("m1", V2);
            await workflows.rename("w1", "w2");
            await new AutoDefinitionRepository(datastore).save("a1", '{"auto":1}');
            expect(await datastore.documents()).not.toEqual(before);
            if (where === "spilled to the staging area") {
              expect(await spilledOps(log, unit)).toBeGreaterThan(0);
            }
            if (ending === "a throw") throw new Error("the run failed unexpectedly");
            return { status: "interrupted" as const };
          };
          const expected: ReconciledKey[] = [
            { partition: MODEL_PART, key: "definition.json", to: "log-version" },
            {
              partition: configPartition("workflow", "w1"),
              key: "definition.json",
              to: "log-version",
            },
            { partition: configPartition("workflow", "w2"), key: "definition.json", to: "absent" },
            { partition: definitionPartition("a1"), key: "definition.json", to: "absent" },
            { partition: r0Part, key: "run.json", to: "log-version" },
            { partition: r0Part, key: "snapshots/s0.json", to: "log-version" },
            { partition: r0Part, key: "snapshots/s1.json", to: "absent" },
            { partition: RUN_PART, key: "run.json", to: "absent" },
          ].sort((a, b) =>
            a.partition === b.partition
              ? a.key < b.key
                ? -1
                : 1
              : a.partition < b.partition
                ? -1
                : 1,
          ) as ReconciledKey[];
          if (ending === "a throw") {
            await expect(withRunUnit(datastore.hook, unit, run)).rejects.toThrow(
              /failed unexpectedly/,
            );
          } else {
            const outcome = await withRunUnit(datastore.hook, unit, run);
            if (outcome.decision !== "abandoned") return expect.fail("an interrupted run abandons");
            expect(outcome.reconciled).toEqual(expected);
          }
          expect(unit.state).toBe("abandoned");
          // Exactly the documents the log holds: nothing created, everything changed restored.
          expect(await datastore.documents()).toEqual(before);
          expect(await datastore.syncChanges()).toEqual([]);
          expect(await log.read((r) => r.pendingUnits())).toEqual([]);

          // The run starts again: its create (expect absent) and an update land.
          const retry = await withRunUnit(datastore.hook, await log.begin(), async () => {
            await runs.create(RUN, { status: "running" });
            await runs.update(RUN, { status: "completed" });
            await runs.update(r0, { status: "completed" });
            await models.edit("m1", V3);
            return { status: "completed" as const };
          });
          if (retry.decision !== "committed") return expect.fail("a completed run commits");
          expect(retry.result.refused).toEqual([]);
          const { model } = await newModel(fx);
          expect(await disagreements(datastore, log, model)).toEqual([]);
        });
      }
    }

    it("a unit decided after its datastore handle was released reconciles nothing there; datastore.reconcile does it later", async () => {
      const location = fx.location();
      const store = datastoreStore(fx);
      const first = await store.open(location, { create: { format: 3 } });
      const { log } = await newLog(fx);
      const unit = await log.begin();
      const unbind = bindUnit(first.hook, unit);
      await new WorkflowRunRepository(first).create(RUN, { status: "running" });
      unbind();
      await first.release();
      const abandoned = await unit.abandon();
      expect(abandoned.reconciled).toEqual([]);
      const again = await store.open(location);
      expect((await again.documents()).map((d) => d.path)).toEqual([`${RUN_PART}/run.json`]);
      expect(await again.reconcile(log, [{ partition: RUN_PART, key: "run.json" }])).toEqual([
        { partition: RUN_PART, key: "run.json", to: "absent" },
      ]);
      expect(await again.documents()).toEqual([]);
      expect(await again.syncChanges()).toEqual([]);
    });

    it("a format-2 datastore is never reconciled: no unit binds to it, reconcile is refused, nothing changes", async () => {
      const datastore = await datastoreStore(fx).open(fx.location(), { create: true });
      expect(datastore.format).toBe(2);
      await runScenario(datastore);
      const documents = await datastore.documents();
      const signals = await datastore.syncChanges();
      expect(signals.length).toBeGreaterThan(0);
      const { log } = await newLog(fx);
      const unit = await log.begin();
      expect((await failureOf(async () => bindUnit(datastore.hook, unit))).code).toBe(
        "unit_binding_refused",
      );
      await expect(
        withRunUnit(datastore.hook, unit, async () => ({ status: "interrupted" as const })),
      ).rejects.toMatchObject({ code: "unit_binding_refused" });
      expect((await unit.abandon()).reconciled).toEqual([]);
      const keys = documents.map((d) => {
        const slash = d.path.indexOf("/");
        return { partition: d.path.slice(0, slash), key: d.path.slice(slash + 1) };
      });
      const refused = await failureOf(() => datastore.reconcile(log, keys));
      expect(refused.code).toBe("reconcile_refused");
      expect(await datastore.documents()).toEqual(documents);
      expect(await datastore.syncChanges()).toEqual(signals);
    });
  });
}
