/**
 * Staged creation (`Driver.stage`, core's port/staged-file.ts): a driver that
 * stages builds a run it is asked to create away from its location and places
 * it there whole. Its two promises, proven here: the file is byte for byte
 * the one a creation in place writes (so nothing downstream can tell, and
 * the cross-adapter family still holds), and a failure at any step — a
 * statement of the build, or the publish — leaves nothing at the location
 * nor a staging file beside it, while the next creation succeeds. Where
 * something is at the location already, even an empty file, the driver
 * declines and the run is created in place.
 */
import { existsSync, statSync } from "node:fs";
import { readdir, readFile, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { type Driver, isStagingFile, type StageOptions } from "@runledger/core/port";
import { expect } from "vitest";
import { FaultInjector } from "../faults.js";
import { type Fixtures, failureOf } from "../fixtures.js";
import { CREATE, carriesInjected, createdRun, firstRow, runStore } from "./run-fixtures.js";

/** The subject's driver without `stage`: every creation in place. */
function inPlace(driver: Driver): Driver {
  const { stage: _stage, ...rest } = driver;
  return rest;
}

/** The subject's driver, counting what its `stage` answered: staged, or declined (undefined). */
function countingStages(driver: Driver): { driver: Driver; answers: string[] } {
  const answers: string[] = [];
  const stage = driver.stage?.bind(driver);
  return {
    answers,
    driver: {
      ...driver,
      ...(stage === undefined
        ? {}
        : {
            stage: async (location: string, options: StageOptions) => {
              const staged = await stage(location, options);
              answers.push(staged === undefined ? "declined" : "staged");
              return staged;
            },
          }),
    },
  };
}

/** One run made the same way whatever the driver: fixed clock and ids, two events, checkpointed. */
async function makeRun(fx: Fixtures, driver: Driver, location: string): Promise<Buffer> {
  let ids = 0;
  const store = runStore(fx, { driver, clock: () => 1_700_000_000_000, newId: () => `e-${++ids}` });
  const lease = await store.open(location, { create: CREATE });
  await lease.transact(async (tx) => {
    await tx.journal.append({ step: "fetch" });
    await tx.journal.append({ step: "build" }, { key: "build-1" });
    await tx.workspace.apply({ put: { "notes/plan.md": "# Plan\n" } });
  });
  await lease.release();
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
}
