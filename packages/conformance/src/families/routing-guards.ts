/**
 * Routing guards (docs/routing.md): two ways a write could reach the documents and
 * the commit log differently, each closed and tested here.
 *
 * - Stale format across handles: a handle opened while the datastore read
 *   as format 2 refuses every write (`datastore_format_changed`, nothing
 *   written) once another handle, store or connection opted it into format
 *   3 — otherwise its writes would skip typed staging and escape the log.
 * - Staging vs a failed write: what a write staged into the bound unit is
 *   removed again when the write rolls back — its callback threw after
 *   staging, or its COMMIT failed — whether the staging was still in the
 *   unit's buffer or had spilled to the log's staging area; the committed
 *   unit and a read model caught up from it hold no trace of the document
 *   that was never written.
 */
import type { CommitResult, CommitUnit, RunTarget } from "@runledger/core/commit-log";
import {
  AutoDefinitionRepository,
  bindUnit,
  CHANGE_BUILDERS,
  type Datastore,
  DatastoreStore,
  DefinitionRepository,
  stageTyped,
  WorkflowRunRepository,
} from "@runledger/core/datastore";
import { describe, expect, it, onTestFinished } from "vitest";
import { FaultInjector } from "../faults.js";
import { type Fixtures, failureOf, thrownBy } from "../fixtures.js";
import { newLog, newModel } from "./commit-log-fixtures.js";
import { datastoreStore, differences, RouteRecorder } from "./routing-fixtures.js";

const R1: RunTarget = { workflowId: "wf", runId: "r1" };
const GHOST: RunTarget = { workflowId: "wf", runId: "ghost" };
const encode = (text: string) => new TextEncoder().encode(text);

/** The datastore path of a change's first op: its partition, a slash, its key. */
function pathOf(changes: readonly { partition: string; ops: readonly { key: string }[] }[]) {
  return `${changes[0]!.partition}/${changes[0]!.ops[0]!.key}`;
}

const R1_PATH = pathOf(CHANGE_BUILDERS.runCreate(R1, encode("{}")));
const GHOST_PATH = pathOf(CHANGE_BUILDERS.runCreate(GHOST, encode("{}")));

interface Guarded {
  readonly datastore: Datastore;
  readonly faults: FaultInjector;
  readonly logFaults: FaultInjector;
  readonly unit: CommitUnit;
  readonly recorder: RouteRecorder;
  readonly log: Awaited<ReturnType<typeof newLog>>["log"];
  readonly unbind: () => void;
}

/** A format-3 datastore and a commit log, each behind its own (unarmed) fault injector, a unit bound. */
async function guarded(fx: Fixtures, unitOptions: { spillOps?: number } = {}): Promise<Guarded> {
  const faults = new FaultInjector(fx.driver());
  const store = new DatastoreStore({ driver: faults.driver, busyTimeoutMs: 2_000 });
  onTestFinished(() => store.close());
  const recorder = new RouteRecorder();
  const datastore = await store.open(fx.location(), {
    create: { format: 3 },
    observer: recorder,
  });
  const logFaults = new FaultInjector(fx.driver());
  const { log } = await newLog(fx, { driver: logFaults.driver });
  const unit = await log.begin(unitOptions);
  const unbind = bindUnit(datastore.hook, unit);
  onTestFinished(unbind);
  return { datastore, faults, logFaults, unit, recorder, log, unbind };
}

/**
 * One write that stages twice into the bound unit: an update of r1's record
 * (joining the batch r1's earlier update opened) and the create of a run
 * `ghost` (a new batch). With `spillOps: 1` the second staging spills the
 * first to the log's staging area. It throws after staging when asked.
 */
function writeTwice(datastore: Datastore, options: { throwAfterStaging: boolean }) {
  const hook = datastore.hook;
  return datastore.write("guards.write-twice", async (w) => {
    const record = encode('{"status":"never-written"}');
    const prior = await w.digest(R1_PATH);
    await w.put(R1_PATH, record);
    await stageTyped(hook, () => CHANGE_BUILDERS.runUpdate(R1, record, prior));
    const ghost = encode('{"status":"ghost"}');
    await w.put(GHOST_PATH, ghost);
    await stageTyped(hook, () => CHANGE_BUILDERS.runCreate(GHOST, ghost));
    if (options.throwAfterStaging) throw new Error("the callback failed after staging");
  });
}

/** The keys the unit holds staged, as `partition/key intent`, in batch order. */
async function stagedKeys(unit: CommitUnit): Promise<string[]> {
  const keys: string[] = [];
  for await (const op of unit.stagedOps()) keys.push(`${op.partition}/${op.key} ${op.intent}`);
  return keys;
}

function commitSizes(result: CommitResult): Record<string, number[]> {
  return Object.fromEntries(
    result.committed.map((p) => [p.partition, p.commits.map((c) => c.opCount)]),
  );
}

export function describeRoutingGuards(fx: Fixtures): void {
  describe("routing guards", () => {
    for (const sibling of ["the same store", "another store"] as const) {
      fx.needs("walSharedMemory").it(
        `a format-2 handle refuses every write, writing nothing, once a handle of ${sibling} opted the datastore into format 3`,
        async () => {
          const location = fx.location();
          const store = datastoreStore(fx);
          const stale = await store.open(location, { create: true });
          expect(stale.format).toBe(2);
          const other = await (sibling === "the same store" ? store : datastoreStore(fx)).open(
            location,
          );
          await other.optIntoFormat3();
          expect(stale.format, "the handle still believes what it read at open").toBe(2);

          const writes: [string, () => Promise<unknown>][] = [
            ["runs.create", () => new WorkflowRunRepository(stale).create(R1, { a: 1 })],
            ["runs.update", () => new WorkflowRunRepository(stale).update(R1, { a: 2 })],
            ["runs.delete", () => new WorkflowRunRepository(stale).delete(R1)],
            [
              "definitions.create",
              () => new DefinitionRepository(stale, "model").create("m", "{}"),
            ],
            ["auto.save", () => new AutoDefinitionRepository(stale).save("a", "{}")],
            ["datastore.write", () => stale.write("raw", (w) => w.put("x/y", encode("z")))],
          ];
          for (const [name, write] of writes) {
            const error = await failureOf(write);
            expect(error.code, name).toBe("datastore_format_changed");
            expect(error.details, name).toMatchObject({ opened: 2, found: 3 });
            expect(error.message, name).toMatch(/open the datastore again/);
          }
          expect(await stale.documents()).toEqual([]);
          expect(await stale.syncChanges()).toEqual([]);
          expect(await stale.marker()).toMatchObject({ format: 3 });
          // Reading is harmless and still works; a reopened handle writes as format 3.
          expect(await new WorkflowRunRepository(stale).get(R1)).toBeUndefined();
          const reopened = await store.open(location);
          expect(reopened.format).toBe(3);
          const { log } = await newLog(fx);
          const unit = await log.begin();
          const unbind = bindUnit(reopened.hook, unit);
          await new WorkflowRunRepository(reopened).create(R1, { a: 1 });
          unbind();
          expect((await unit.commit()).committed.map((p) => p.partition)).toEqual(["run--wf--r1"]);
          expect(await stale.syncChanges(), "still no route-1 signal").toEqual([]);
        },
      );
    }

    fx.needs("walSharedMemory").it(
      "a handle refuses to write when another connection changed the marker under it, either way",
      async () => {
        const location = fx.location();
        const v2 = await datastoreStore(fx).open(location, { create: true });
        const raw = await fx.open(location);
        onTestFinished(() => raw.close());
        await raw.execute("INSERT INTO format_marker (singleton, marker) VALUES (1, ?)", [
          '{"format":3,"minReaderFormat":3,"writtenBy":"runledger/other"}',
        ]);
        const toThree = await failureOf(() => new WorkflowRunRepository(v2).create(R1, {}));
        expect(toThree.code).toBe("datastore_format_changed");
        expect(toThree.details).toMatchObject({ opened: 2, found: 3 });

        const v3 = await datastoreStore(fx).open(location);
        expect(v3.format).toBe(3);
        await raw.execute("DELETE FROM format_marker");
        const { log } = await newLog(fx);
        const unbind = bindUnit(v3.hook, await log.begin());
        const toTwo = await failureOf(() => new WorkflowRunRepository(v3).create(R1, {}));
        unbind();
        expect(toTwo.code).toBe("datastore_format_changed");
        expect(toTwo.details).toMatchObject({ opened: 3, found: 2 });
        expect(await v3.documents()).toEqual([]);
        expect(await v3.syncChanges()).toEqual([]);

        // A marker of the same format in other words is not a change of format.
        await raw.execute("INSERT INTO format_marker (singleton, marker) VALUES (1, ?)", [
          '{"format":2,"minReaderFormat":2,"writtenBy":"runledger/other"}',
        ]);
        await new WorkflowRunRepository(v2).create(R1, { a: 1 });
        expect((await v2.documents()).map((d) => d.path)).toEqual([R1_PATH]);
      },
    );

    for (const cause of ["a callback that throws after staging", "a failed COMMIT"] as const) {
      for (const where of ["in the unit's buffer", "spilled to the staging area"] as const) {
        it(`a write rolled back by ${cause} leaves nothing staged (${where}): no trace after commit and catch-up`, async () => {
          const spilled = where === "spilled to the staging area";
          const g = await guarded(fx, spilled ? { spillOps: 1 } : {});
          const runs = new WorkflowRunRepository(g.datastore);
          await runs.create(R1, { status: "running" });
          await runs.update(R1, { status: "running", step: 1 });
          const written = await g.datastore.documents();

          const mark = g.logFaults.statements.length;
          if (cause === "a failed COMMIT") g.faults.arm({ match: /^COMMIT$/, nth: 1 });
          const error = await thrownBy(() =>
            writeTwice(g.datastore, { throwAfterStaging: cause !== "a failed COMMIT" }),
          );
          g.faults.disarm();
          if (cause === "a failed COMMIT") {
            expect(g.faults.fired).toBe(1);
            expect(error).toMatchObject({ code: "io_error", details: { injected: true } });
          } else {
            expect(error.message).toMatch(/failed after staging/);
          }
          const during = g.logFaults.statements.slice(mark);
          const spills = during.filter((sql) => sql.startsWith("INSERT INTO staged_op")).length;
          // The variant is what it says: with spillOps 1 the write's first staging
          // reached the staging area before the write failed; otherwise nothing spilled.
          expect(spills, where).toBe(spilled ? 2 : 0);

          expect(await g.datastore.documents(), "the write rolled back").toEqual(written);
          expect(await stagedKeys(g.unit)).toEqual([
            "run--wf--r1/run.json run.create",
            "run--wf--r1/run.json run.update",
          ]);

          // The unit goes on: the next update fills the same batch from where it was.
          await runs.update(R1, { status: "completed" });
          g.unbind();
          const result = await g.unit.commit();
          expect(result.refused).toEqual([]);
          expect(commitSizes(result)).toEqual({ "run--wf--r1": [1, 2] });
          const { model } = await newModel(fx);
          await model.catchUp(g.log);
          const found = await differences({
            datastore: g.datastore,
            model,
            result,
            recorder: g.recorder,
            locations: [],
          });
          expect(found).toEqual([]);
          expect(await g.datastore.documents()).toHaveLength(1);
        });
      }
    }

    it("a rolled-back write whose staging cannot be discarded leaves the unit unable to commit", async () => {
      const g = await guarded(fx, { spillOps: 1 });
      const runs = new WorkflowRunRepository(g.datastore);
      await runs.create(R1, { status: "running" });
      await runs.update(R1, { status: "running", step: 1 });
      g.logFaults.arm({
        match: /^DELETE FROM staged_op WHERE txn_id = \? AND batch >= \?/,
        nth: 1,
      });
      const error = await thrownBy(() => writeTwice(g.datastore, { throwAfterStaging: true }));
      g.logFaults.disarm();
      expect(g.logFaults.fired, "the discard was attempted and failed").toBe(1);
      expect(error.message, "the write's own error is the one thrown").toMatch(
        /failed after staging/,
      );
      expect(g.unit.state).toBe("incomplete");
      // Further writes through the hook are refused, and roll back.
      const next = await failureOf(() => runs.update(R1, { status: "completed" }));
      expect(next.code).toBe("unit_incomplete");
      const refused = await failureOf(() => g.unit.commit());
      expect(refused.code).toBe("unit_incomplete");
      expect(refused.details).toMatchObject({ reason: "discard_failed" });
      g.unbind();
      await g.unit.abandon();
      expect(await g.log.read((r) => r.info())).toMatchObject({ lastCommitId: 0 });
      expect(await g.log.read((r) => r.pendingUnits())).toEqual([]);
    });

    it("a write rolled back while another hook's write waits keeps the other's staging", async () => {
      const { log } = await newLog(fx);
      const unit = await log.begin();
      const store = datastoreStore(fx);
      const failing = await store.open(fx.location(), { create: { format: 3 } });
      const recorder = new RouteRecorder();
      const good = await store.open(fx.location(), { create: { format: 3 }, observer: recorder });
      const unbindFailing = bindUnit(failing.hook, unit);
      const unbindGood = bindUnit(good.hook, unit);
      let staged!: () => void;
      const hasStaged = new Promise<void>((resolve) => {
        staged = resolve;
      });
      const failed = failing
        .write("guards.failing", async (w) => {
          const ghost = encode('{"status":"ghost"}');
          await w.put(GHOST_PATH, ghost);
          await stageTyped(failing.hook, () => CHANGE_BUILDERS.runCreate(GHOST, ghost));
          staged();
          // Give the other write every chance to stage meanwhile.
          await new Promise((resolve) => setTimeout(resolve, 50));
          throw new Error("the callback failed after staging");
        })
        .catch((error: Error) => error);
      await hasStaged;
      const landed = new WorkflowRunRepository(good).create(R1, { status: "running" });
      expect(await failed).toBeInstanceOf(Error);
      await landed;
      unbindFailing();
      unbindGood();
      const result = await unit.commit();
      expect(result.committed.map((p) => p.partition)).toEqual(["run--wf--r1"]);
      const { model } = await newModel(fx);
      await model.catchUp(log);
      expect(
        await differences({ datastore: good, model, result, recorder, locations: [] }),
      ).toEqual([]);
      expect(await failing.documents()).toEqual([]);
    });
  });
}
