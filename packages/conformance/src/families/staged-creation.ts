/**
 * Staged creation (`Driver.stage`, core's port/staged-file.ts): a driver that
 * stages builds a run it is asked to create away from its location and places
 * it there whole. Its two promises, proven here: the file is byte for byte
 * the one a creation in place writes (so nothing downstream can tell, and
 * the cross-adapter family still holds), and a failure at any step — a
 * statement of the build, or the publish — leaves nothing at the location
 * nor a staging file beside it, while the next creation succeeds. Where
 * something is at the location already, even an empty file, the driver
 * declines and the run is created in place. Where its staged database places
 * copies (`placeCopy`), a store stages once and places every later run from
 * the one it keeps: the same bytes run after run, a creation that fails there
 * leaving it as it was, and the store closing it.
 */
import { existsSync, statSync } from "node:fs";
import { readdir, readFile, writeFile } from "node:fs/promises";
import { join } from "node:path";
import type { RunStore } from "@runledger/core";
import {
  type Driver,
  isStagingFile,
  type StagedDatabase,
  type StageOptions,
} from "@runledger/core/port";
import { expect } from "vitest";
import { FaultInjector } from "../faults.js";
import { type Fixtures, failureOf } from "../fixtures.js";
import { CREATE, carriesInjected, createdRun, firstRow, runStore } from "./run-fixtures.js";

/** The subject's driver without `stage`: every creation in place. */
function inPlace(driver: Driver): Driver {
  const { stage: _stage, ...rest } = driver;
  return rest;
}

/**
 * The subject's driver, counting what its `stage` answered — staged, or
 * declined (undefined) — and how many of the staged databases were closed.
 */
function countingStages(driver: Driver): {
  driver: Driver;
  answers: string[];
  closed: () => number;
} {
  const answers: string[] = [];
  let closed = 0;
  const stage = driver.stage?.bind(driver);
  const counted = (staged: StagedDatabase): StagedDatabase =>
    new Proxy(staged, {
      get(target, key) {
        if (key === "close") {
          return () => {
            closed++;
            return target.close();
          };
        }
        const value: unknown = Reflect.get(target, key, target);
        return typeof value === "function" ? value.bind(target) : value;
      },
    });
  return {
    answers,
    closed: () => closed,
    driver: {
      ...driver,
      ...(stage === undefined
        ? {}
        : {
            stage: async (location: string, options: StageOptions) => {
              const staged = await stage(location, options);
              answers.push(staged === undefined ? "declined" : "staged");
              return staged === undefined ? undefined : counted(staged);
            },
          }),
    },
  };
}

/** A store whose runs are made the same way whatever the driver: a fixed clock and ids. */
function fixedStore(fx: Fixtures, driver: Driver): RunStore {
  let ids = 0;
  return runStore(fx, { driver, clock: () => 1_700_000_000_000, newId: () => `e-${++ids}` });
}

/** One run made the same way whatever the driver: fixed clock and ids, two events, checkpointed. */
async function makeRun(fx: Fixtures, driver: Driver, location: string): Promise<Buffer> {
  return makeRunIn(fx, fixedStore(fx, driver), location);
}

/** `makeRun` with a store of the caller's (`fixedStore`), which may make several. */
async function makeRunIn(fx: Fixtures, store: RunStore, location: string): Promise<Buffer> {
  const lease = await store.open(location, { create: CREATE });
  await lease.transact(async (tx) => {
    await tx.journal.append({ step: "fetch" });
    await tx.journal.append({ step: "build" }, { key: "build-1" });
    await tx.workspace.apply({ put: { "notes/plan.md": "# Plan\n" } });
  });
  await lease.release();
  return checkpointedBytes(fx, location);
}

/** The file at `location` once its log is folded in. */
async function checkpointedBytes(fx: Fixtures, location: string): Promise<Buffer> {
  const checkpoint = await firstRow(fx, location, "PRAGMA wal_checkpoint(TRUNCATE)");
  expect(Number(Object.values(checkpoint)[0]), "checkpoint busy").toBe(0);
  return readFile(location);
}

/** The names in `directory` that are staging files (none should outlive a creation). */
async function stagingFiles(directory: string): Promise<string[]> {
  return (await readdir(directory)).filter(isStagingFile);
}

/** Opens the run at `location` (without create), verifies it and answers its event count. */
async function verifiedEvents(fx: Fixtures, location: string): Promise<number> {
  const lease = await runStore(fx).open(location);
  try {
    const report = await lease.verify();
    expect(report.problems).toEqual([]);
    return report.counts.events;
  } finally {
    await lease.release();
  }
}

export function describeStagedCreation(fx: Fixtures): void {
  const staged = fx
    .needs("files", "stagedCreation")
    .because("the driver creates every database in place (it has no Driver.stage)");
  staged.describe("staged creation", () => {
    staged.it(
      "a run created whole is byte for byte the same run created in place, with the same permissions",
      async () => {
        const directory = await fx.scratchDirectory();
        const counting = countingStages(fx.driver());
        // A umask under which a file made with node's default mode (0666) would differ from SQLite's (0644).
        const umask = process.umask(0o002);
        let whole: Buffer;
        let placed: Buffer;
        try {
          whole = await makeRun(fx, counting.driver, join(directory, "whole.sqlite"));
          placed = await makeRun(fx, inPlace(fx.driver()), join(directory, "placed.sqlite"));
        } finally {
          process.umask(umask);
        }
        expect(counting.answers, "the run was staged, not created in place").toEqual(["staged"]);
        expect(whole.byteLength).toBe(placed.byteLength);
        expect(whole.equals(placed), "the two files' bytes").toBe(true);
        const mode = (name: string) => statSync(join(directory, name)).mode;
        expect(mode("whole.sqlite"), "the two files' permissions").toBe(mode("placed.sqlite"));
        expect(await stagingFiles(directory)).toEqual([]);
      },
    );

    staged.it(
      "a creation that fails on a store's kept staged database leaves it as it was: nothing at that location, and the next run is byte for byte the one created in place",
      async () => {
        const directory = await fx.scratchDirectory();
        const faults = new FaultInjector(fx.driver(), { stage: true });
        const store = fixedStore(fx, faults.driver);
        await makeRunIn(fx, store, join(directory, "first.sqlite"));
        const failed = join(directory, "failed.sqlite");
        // The run's own row: written on the kept database where it places copies, else on a new one.
        faults.arm({ nth: 1, match: /^INSERT INTO run /, endsTransaction: true });
        const failure = await failureOf(() => store.open(failed, { create: CREATE }));
        faults.disarm();
        expect(carriesInjected(failure), "the creation's failure").toBe(true);
        expect(existsSync(failed), "the location of the failed creation").toBe(false);
        const next = await makeRunIn(fx, store, join(directory, "next.sqlite"));
        // The same two runs in place, from a store whose ids have gone as far.
        const inPlaceStore = fixedStore(fx, inPlace(fx.driver()));
        await makeRunIn(fx, inPlaceStore, join(directory, "first-placed.sqlite"));
        const placed = await makeRunIn(fx, inPlaceStore, join(directory, "next-placed.sqlite"));
        expect(next.equals(placed), "the next run's bytes").toBe(true);
        expect(await stagingFiles(directory)).toEqual([]);
      },
    );

    staged.it(
      "a store of durability full creates whole too, and the run it makes is the same",
      async () => {
        const directory = await fx.scratchDirectory();
        const counting = countingStages(fx.driver());
        const full = join(directory, "full.sqlite");
        await createdRun(fx, { driver: counting.driver, durability: "full" }, full);
        expect(counting.answers).toEqual(["staged"]);
        expect(await verifiedEvents(fx, full)).toBe(0);
        await createdRun(fx, { driver: inPlace(fx.driver()) }, join(directory, "placed.sqlite"));
        const bytes = async (name: string) => (await readFile(join(directory, name))).byteLength;
        expect(await bytes("full.sqlite")).toBe(await bytes("placed.sqlite"));
      },
    );

    staged.it(
      "an empty file at the location is not staged over: the run is created in place in it",
      async () => {
        const directory = await fx.scratchDirectory();
        const location = join(directory, "empty.sqlite");
        await writeFile(location, "");
        const counting = countingStages(fx.driver());
        await createdRun(fx, { driver: counting.driver }, location);
        expect(counting.answers).toEqual(["declined"]);
        expect(await verifiedEvents(fx, location)).toBe(0);
      },
    );

    staged.it(
      "a fault at any step of a staged creation leaves nothing at the location or beside it, and the next creation succeeds",
      async () => {
        const faults = new FaultInjector(fx.driver(), { stage: true });
        const steps: string[] = [];
        for (let k = 1; ; k++) {
          expect(k, "creation never finished without a fault").toBeLessThan(200);
          const directory = await fx.scratchDirectory();
          const location = join(directory, "run.sqlite");
          const from = faults.statements.length;
          faults.arm({ nth: k });
          const store = runStore(fx, { driver: faults.driver, busyTimeoutMs: 1_000 });
          const failure = await store
            .open(location, { create: CREATE })
            .then((lease) => lease.release())
            .then(
              () => undefined,
              (error: unknown) => error,
            );
          await store.close();
          const fired = faults.fired;
          faults.disarm();
          const step = faults.statements[from + k - 1] ?? "?";
          if (fired === 0) {
            expect(failure).toBeUndefined();
            expect(steps, "the publish was among the faulted steps").toContain("PUBLISH");
            break;
          }
          steps.push(step);
          expect(carriesInjected(failure), `a fault at step ${k}: ${step}`).toBe(true);
          const published = faults.statements.slice(from, from + k).includes("PUBLISH");
          if (!published || step === "PUBLISH") {
            // Failed before the run was placed: nothing there, nothing beside it.
            expect(existsSync(location), `the location after a fault at ${step}`).toBe(false);
          }
          expect(await stagingFiles(directory), `beside it after a fault at ${step}`).toEqual([]);
          await createdRun(fx, {}, location);
          expect(await verifiedEvents(fx, location)).toBe(0);
        }
      },
    );

    staged.it(
      "two stores creating one new location at once make one run, and both open it",
      async () => {
        const directory = await fx.scratchDirectory();
        const location = join(directory, "raced.sqlite");
        for (let round = 0; round < 20; round++) {
          const target = `${location}.${round}`;
          const leases = await Promise.all(
            [runStore(fx), runStore(fx)].map((store) => store.open(target, { create: CREATE })),
          );
          for (const lease of leases) {
            expect((await lease.read((r) => r.run.get())).runId).toBe(CREATE.runId);
            await lease.release();
          }
        }
        expect(await stagingFiles(directory)).toEqual([]);
      },
    );

    staged.it("the driver's listing never offers a staging file as a database", async () => {
      const driver = fx.driver();
      expect(driver.listDatabases, "a staging driver lists its directory").toBeDefined();
      const directory = await fx.scratchDirectory();
      await createdRun(fx, {}, join(directory, "a.sqlite"));
      await writeFile(join(directory, ".b.sqlite.creating"), "half a database");
      const listed = await driver.listDatabases!(directory);
      expect(listed).toEqual([join(directory, "a.sqlite")]);
      const error = await failureOf(() => runStore(fx).open(join(directory, "b.sqlite")));
      expect(error.code).toBe("not_found");
    });
  });

  const copies = fx
    .needs("files", "stagedCreation", "stagedCopies")
    .because("the driver's staged databases place no copies: every creation stages its own");
  copies.describe("staged creation from a kept staged database", () => {
    copies.it(
      "a copy holds what the staged database's open transaction wrote, the transaction goes on, and an occupied location is left as found",
      async () => {
        const directory = await fx.scratchDirectory();
        const driver = fx.driver();
        const staged = await driver.stage!(join(directory, "staged.sqlite"), {
          synchronous: "normal",
        });
        expect(staged?.placeCopy, "a staged database that places copies").toBeDefined();
        const copy = (name: string) => staged!.placeCopy!(join(directory, name));
        const tx = await staged!.begin("immediate");
        await tx.execute("CREATE TABLE step (n INTEGER)");
        await tx.execute("INSERT INTO step (n) VALUES (1)");
        expect(await copy("one.sqlite")).toBe(true);
        await tx.execute("INSERT INTO step (n) VALUES (2)");
        expect(await copy("two.sqlite")).toBe(true);
        const before = await readFile(join(directory, "one.sqlite"));
        expect(await copy("one.sqlite"), "a copy to an occupied location").toBe(false);
        expect((await readFile(join(directory, "one.sqlite"))).equals(before)).toBe(true);
        await tx.rollback();
        expect(await copy("none.sqlite")).toBe(true);
        await staged!.close();
        const count = async (name: string) =>
          firstRow(fx, join(directory, name), "SELECT count(*) AS n FROM sqlite_schema");
        expect(
          Number(
            (await firstRow(fx, join(directory, "one.sqlite"), "SELECT sum(n) AS n FROM step")).n,
          ),
        ).toBe(1);
        expect(
          Number(
            (await firstRow(fx, join(directory, "two.sqlite"), "SELECT sum(n) AS n FROM step")).n,
          ),
        ).toBe(3);
        expect(Number((await count("none.sqlite")).n), "after the rollback: no table").toBe(0);
        expect(
          existsSync(join(directory, "staged.sqlite")),
          "the staged database's own location",
        ).toBe(false);
        expect(await stagingFiles(directory)).toEqual([]);
      },
    );

    copies.it(
      "a store stages once: each later run is placed from the staged database it keeps, byte for byte the run created in place",
      async () => {
        const directory = await fx.scratchDirectory();
        const counting = countingStages(fx.driver());
        const store = fixedStore(fx, counting.driver);
        const inPlaceStore = fixedStore(fx, inPlace(fx.driver()));
        for (const name of ["a", "b", "c"]) {
          const whole = await makeRunIn(fx, store, join(directory, `${name}-whole.sqlite`));
          const placed = await makeRunIn(
            fx,
            inPlaceStore,
            join(directory, `${name}-placed.sqlite`),
          );
          expect(whole.equals(placed), `run ${name}: the two files' bytes`).toBe(true);
        }
        expect(counting.answers, "what the store staged").toEqual(["staged"]);
        expect(await stagingFiles(directory)).toEqual([]);
      },
    );

    copies.it("the store keeps its staged database open until it is closed", async () => {
      const directory = await fx.scratchDirectory();
      const counting = countingStages(fx.driver());
      const store = runStore(fx, { driver: counting.driver });
      for (const name of ["a", "b"]) {
        await (await store.open(join(directory, `${name}.sqlite`), { create: CREATE })).release();
      }
      expect(counting.closed(), "staged databases closed while the store is open").toBe(0);
      await store.close();
      expect(counting.closed(), "staged databases closed with the store").toBe(1);
    });
  });
}
