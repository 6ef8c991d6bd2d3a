import { readFile, writeFile } from "node:fs/promises";
import {
  type BuilderName,
  bindUnit,
  CHANGE_BUILDERS,
  DATASTORE_WRITTEN_BY,
  type RunEnding,
  WorkflowRunRepository,
  withRunUnit,
} from "@runledger/core/datastore";
import { describe, expect, it } from "vitest";
import { type Fixtures, failureOf } from "../fixtures.js";
import { newLog, newModel } from "./commit-log-fixtures.js";
import {
  databaseFiles,
  datastoreStore,
  differences,
  MemoryVault,
  ROUTING_GOLDEN,
  RouteRecorder,
  reducedBuilder,
  runScenario,
  runScenarioOnV3,
  SECRET_VALUES,
  spyOnBuilders,
} from "./routing-fixtures.js";

const GOLDEN = ROUTING_GOLDEN;
const UPDATE_GOLDEN = process.env.RUNLEDGER_UPDATE_GOLDEN === "1";

export function describeRouting(fx: Fixtures): void {
  describe("routing v2/v3", () => {
    it("v2 does not change: recorded routes equal the golden file; no builder runs", async () => {
      const recordings = [];
      for (const namespace of [undefined, "team-a"]) {
        const recorder = new RouteRecorder();
        const spy = spyOnBuilders();
        const datastore = await datastoreStore(fx).open(fx.location(), {
          create: true,
          observer: recorder,
          ...(namespace === undefined ? {} : { namespace }),
        });
        expect(datastore.format).toBe(2);
        await runScenario(datastore, { builders: spy.builders });
        expect([...spy.calls], "builders never run on v2").toEqual([]);
        // Route 1 landed in the datastore, one sync row per signal, under the namespace.
        const signals = recorder.records.filter((r) => r.route === "signal");
        const synced = await datastore.syncChanges();
        expect(synced.map((s) => [s.kind, s.path])).toEqual(
          signals.map((s) => [s.kind, (s as { key: string }).key]),
        );
        recordings.push(recorder.records);
      }
      expect(recordings[1], "a namespace changes no route").toEqual(recordings[0]);
      if (UPDATE_GOLDEN) {
        const lines = recordings[0]!.map((record) => `  ${JSON.stringify(record)}`);
        await writeFile(GOLDEN, `{\n "records": [\n${lines.join(",\n")}\n ]\n}\n`);
      }
      const golden = JSON.parse(await readFile(GOLDEN, "utf8")) as { records: unknown[] };
      expect(recordings[0]).toEqual(golden.records);
      // v2 makes no read a typed change needs: no digest read by an update, edit or save.
      const typedOnly = recordings[0]!.filter(
        (r) => r.route === "read" && r.kind === "digest" && !/\.(create|rename)$/.test(r.caller),
      );
      expect(typedOnly).toEqual([]);
    });

    for (const namespace of [undefined, "team-a"]) {
      it(`v3 end to end${namespace ? ", namespaced" : ""}: the read model equals what the repositories wrote`, async () => {
        const outcome = await runScenarioOnV3(fx, namespace === undefined ? {} : { namespace });
        expect(outcome.result.refused).toEqual([]);
        expect(await differences(outcome)).toEqual([]);
        expect((await outcome.datastore.documents()).length).toBeGreaterThanOrEqual(10);
        // No route-1 signal while a unit is bound: the typed changes replace them.
        expect(outcome.recorder.records.filter((r) => r.route === "signal")).toEqual([]);
        expect(await outcome.datastore.syncChanges()).toEqual([]);
      });
    }

    it("mutation checks: every builder's output reduced by one op is caught", async () => {
      const caught: Record<string, boolean> = {};
      for (const name of Object.keys(CHANGE_BUILDERS) as BuilderName[]) {
        let found: string[];
        try {
          found = await differences(await runScenarioOnV3(fx, { builders: reducedBuilder(name) }));
        } catch (error) {
          found = [`the scenario failed: ${String(error)}`];
        }
        caught[name] = found.length > 0;
      }
      expect(Object.values(caught).length).toBe(Object.keys(CHANGE_BUILDERS).length);
      expect(caught).toEqual(
        Object.fromEntries(Object.keys(CHANGE_BUILDERS).map((n) => [n, true])),
      );
    });

    it("run outcomes on v3: an ended run commits; an early stop or an error discards", async () => {
      const endings: RunEnding[] = ["completed", "failed", "suspended", "cancelled", "interrupted"];
      const store = datastoreStore(fx);
      for (const status of [...endings, "error" as const]) {
        const datastore = await store.open(fx.location(), { create: { format: 3 } });
        const runs = new WorkflowRunRepository(datastore);
        const { log } = await newLog(fx);
        const run = { workflowId: "wf", runId: status };
        const work = async () => {
          await runs.create(run, { status: "running" });
          await runs.saveSnapshot(run, "s1", "{}");
          if (status === "error") throw new Error("the run failed to run");
          await runs.update(run, { status });
          return { status };
        };
        const outcome = await withRunUnit(datastore.hook, await log.begin(), work).catch(
          (error: Error) => error,
        );
        const info = await log.read((r) => r.info());
        expect(await log.read((r) => r.pendingUnits())).toEqual([]);
        if (status === "error") {
          expect(outcome).toBeInstanceOf(Error);
          expect(info.lastCommitId, status).toBe(0);
        } else if (status === "interrupted") {
          expect(outcome).toMatchObject({ decision: "abandoned" });
          expect(info.lastCommitId, status).toBe(0);
        } else {
          expect(outcome).toMatchObject({ decision: "committed", value: { status } });
          const { model } = await newModel(fx);
          await model.catchUp(log);
          const recorder = new RouteRecorder();
          // Catalog intents: create, then update for run.json; save for the snapshot.
          recorder.record({
            route: "stage",
            caller: "",
            kind: "run.update",
            key: `run--wf--${status}/run.json`,
            op: "put",
          });
          recorder.record({
            route: "stage",
            caller: "",
            kind: "run-snapshot.save",
            key: `run--wf--${status}/snapshots/s1.json`,
            op: "put",
          });
          const result = outcome as { result: import("@runledger/core/commit-log").CommitResult };
          expect(
            await differences({ datastore, model, result: result.result, recorder, locations: [] }),
          ).toEqual([]);
        }
        // The hook is unbound again: a v3 write now is unscoped.
        expect((await failureOf(() => runs.update(run, { status: "x" }))).code).toBe(
          "unscoped_write_refused",
        );
      }
    });

    it("v3 with no bound unit refuses the write and writes nothing; v2 takes no unit", async () => {
      const store = datastoreStore(fx);
      const v3 = await store.open(fx.location(), { create: { format: 3 } });
      const runs = new WorkflowRunRepository(v3);
      const error = await failureOf(() => runs.create({ workflowId: "wf", runId: "r" }, {}));
      expect(error.code).toBe("unscoped_write_refused");
      expect(await v3.documents()).toEqual([]);
      expect(await v3.syncChanges()).toEqual([]);
      const v2 = await store.open(fx.location(), { create: true });
      const { log } = await newLog(fx);
      const unit = await log.begin();
      expect((await failureOf(async () => bindUnit(v2.hook, unit))).code).toBe(
        "unit_binding_refused",
      );
      const unbind = bindUnit(v3.hook, unit);
      expect((await failureOf(async () => bindUnit(v3.hook, unit))).code).toBe(
        "unit_binding_refused",
      );
      unbind();
    });

    fx.needs("files").it(
      "no secret value reaches any database file (incl. -wal) or chunk",
      async () => {
        const vault = new MemoryVault();
        const outcome = await runScenarioOnV3(fx, { vault });
        expect(await differences(outcome)).toEqual([]);
        expect([...vault.secrets.values()]).toContain(SECRET_VALUES[0]);
        const v2 = await datastoreStore(fx).open(fx.location(), { create: true });
        await runScenario(v2, { vault: new MemoryVault() });
        // Every database file and whichever of its -wal, -shm, -journal exist now
        // (a driver may leave none of them once closed).
        const locations = [...outcome.locations, v2.location];
        const scanned = locations.flatMap((location) => databaseFiles(location));
        expect(scanned).toEqual(expect.arrayContaining(locations));
        for (const file of scanned) {
          const bytes = await readFile(file);
          for (const secret of SECRET_VALUES) {
            expect(bytes.includes(Buffer.from(secret)), `${secret} in ${file}`).toBe(false);
          }
        }
        expect(JSON.stringify(outcome.recorder.records)).not.toContain(SECRET_VALUES[0]);
      },
    );

    fx.needs("files").it(
      "format markers: none is 2; newer or garbled ones are refused, the file unchanged",
      async () => {
        const location = fx.location();
        const first = datastoreStore(fx);
        const datastore = await first.open(location, { create: true });
        expect(datastore.format).toBe(2);
        expect(await datastore.marker()).toBeUndefined();
        await new WorkflowRunRepository(datastore).create({ workflowId: "wf", runId: "r" }, {});
        await first.close();
        const cases: [string, string][] = [
          [
            '{"format":4,"minReaderFormat":4,"writtenBy":"runledger/9"}',
            "datastore_format_unsupported",
          ],
          [
            '{"format":4,"minReaderFormat":3,"writtenBy":"runledger/9"}',
            "datastore_format_unsupported",
          ],
          ["{not json", "invalid_format_marker"],
          ["[3]", "invalid_format_marker"],
          ['{"format":3}', "invalid_format_marker"],
          ['{"format":3,"minReaderFormat":4,"writtenBy":"x"}', "invalid_format_marker"],
          ['{"format":"3","minReaderFormat":3,"writtenBy":"x"}', "invalid_format_marker"],
          ['{"format":3,"minReaderFormat":3,"writtenBy":""}', "invalid_format_marker"],
          ['{"format":3,"minReaderFormat":3,"writtenBy":"x","extra":1}', "invalid_format_marker"],
        ];
        for (const [marker, code] of cases) {
          const raw = await fx.open(location);
          await raw.execute(
            "INSERT OR REPLACE INTO format_marker (singleton, marker) VALUES (1, ?)",
            [marker],
          );
          await raw.close();
          const before = await readFile(location);
          const walBefore = await readFile(`${location}-wal`).catch(() => undefined);
          const error = await failureOf(() => datastoreStore(fx).open(location));
          expect(error.code, marker).toBe(code);
          expect((await readFile(location)).equals(before), marker).toBe(true);
          // An empty -wal may vanish meanwhile: a closed libSQL handle removes it
          // when its statements are finalized (docs/contracts.md, close).
          const walAfter = await readFile(`${location}-wal`).catch(() => undefined);
          if (walBefore !== undefined && (walAfter !== undefined || walBefore.length > 0))
            expect(walAfter?.equals(walBefore), marker).toBe(true);
        }
      },
    );

    it("opting into format 3 is allowed only while the datastore is new and empty", async () => {
      const store = datastoreStore(fx);
      const fresh = await store.open(fx.location(), { create: true });
      await fresh.optIntoFormat3();
      expect(fresh.format).toBe(3);
      expect(await fresh.marker()).toEqual({
        format: 3,
        minReaderFormat: 3,
        writtenBy: DATASTORE_WRITTEN_BY,
      });
      expect((await failureOf(() => fresh.optIntoFormat3())).code).toBe("format_opt_in_refused");

      const location = fx.location();
      const used = await store.open(location, { create: true });
      await new WorkflowRunRepository(used).create({ workflowId: "wf", runId: "r" }, { a: 1 });
      const documents = await used.documents();
      const signals = await used.syncChanges();
      expect((await failureOf(() => used.optIntoFormat3())).code).toBe("format_opt_in_refused");
      const again = await failureOf(() => store.open(location, { create: { format: 3 } }));
      expect(again.code).toBe("format_opt_in_refused");
      expect(used.format).toBe(2);
      expect(await used.marker()).toBeUndefined();
      expect(await used.documents()).toEqual(documents);
      expect(await used.syncChanges()).toEqual(signals);
    });
  });
}
