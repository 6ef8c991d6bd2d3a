/**
 * Removing a run family (docs/api.md, `store.remove`): a run is deleted with
 * its side files only when nothing else holds it — a lease of this store,
 * or a connection of another process — and never half: a failure at any
 * step, or a deletion cut short after any of its files, leaves the run
 * intact or gone. Only a recognized run is deleted; a missing one is
 * `not_found`, another program's file is refused as on open.
 */
import { existsSync, readdirSync, rmSync, writeFileSync } from "node:fs";
import { basename, dirname } from "node:path";
import { RunledgerError } from "@runledger/core";
import { type Driver, databaseFiles } from "@runledger/core/port";
import { describe, expect } from "vitest";
import { FaultInjector } from "../faults.js";
import { type Fixtures, failureOf } from "../fixtures.js";
import { CREATE, runStore } from "./run-fixtures.js";

/** A run with a few events and a file, every lease released. */
async function writtenRun(fx: Fixtures, location = fx.location()): Promise<string> {
  const store = runStore(fx);
  const lease = await store.open(location, { create: CREATE });
  await lease.transact(async (tx) => {
    await tx.workspace.apply({ put: { "a.txt": "a".repeat(400) } });
    await tx.journal.append({ n: 1 });
  });
  await lease.release();
  await store.close();
  return location;
}

/** The files beside `location` that belong to it (itself and its side files). */
function filesOf(location: string): string[] {
  const name = basename(location);
  return readdirSync(dirname(location)).filter(
    (file) => file === name || file.startsWith(`${name}-`),
  );
}

/** The run at `location` opens and verifies with nothing wrong, as written by writtenRun. */
async function expectIntact(fx: Fixtures, location: string): Promise<void> {
  const lease = await runStore(fx).open(location);
  try {
    expect((await lease.verify()).problems).toStrictEqual([]);
    expect(await lease.read((r) => r.journal.list())).toHaveLength(2);
  } finally {
    await lease.release();
  }
}

/** The run at `location` is gone: opening it finds nothing (no file; on a server, no such namespace). */
async function expectGone(fx: Fixtures, location: string, store = runStore(fx)): Promise<void> {
  const error = await failureOf(() => store.open(location));
  expect([error.code, (error.cause as RunledgerError | undefined)?.details?.missing]).toStrictEqual(
    ["not_found", fx.subject.capabilities?.remote === true ? "namespace" : "file"],
  );
}

/** Why a removal right after this process closed the run is not tested where close leaves the file held. */
const LINGERS =
  "the driver frees a closed connection's native handle only when it is garbage-collected, and until then that handle keeps the file open, which a removal sees as another connection (docs/architecture.md)";

/** A driver whose removal deletes only the first `files` files of a database, then fails. */
function cutShort(inner: Driver, files: number): Driver {
  return {
    ...inner,
    async remove(location: string): Promise<void> {
      for (const file of databaseFiles(location).slice(0, files)) {
        if (existsSync(file)) rmSync(file);
      }
      throw new RunledgerError("io_error", `removal cut short after ${files} files`);
    },
  };
}

export function describeRunRemove(fx: Fixtures): void {
  describe("run remove", () => {
    // A server deletes its own way; a local file must be let go of by every closed connection.
    const removable =
      fx.subject.capabilities?.remote === true
        ? fx.needs()
        : fx.needs("closeReleasesFile").because(LINGERS);

    removable.it(
      "deletes a run and its side files; it is then not_found, and a new run can be created there",
      async () => {
        const location = await writtenRun(fx);
        const store = runStore(fx);
        await store.remove(location);
        if (fx.subject.capabilities?.files === true) expect(filesOf(location)).toStrictEqual([]);
        await expectGone(fx, location, store);
        const gone = await failureOf(() => store.remove(location));
        expect(gone.code).toBe("not_found");
        const again = await store.open(location, { create: CREATE });
        expect(await again.read((r) => r.journal.list())).toStrictEqual([]);
        await again.release();
      },
    );

    removable.it(
      "refuses run_in_use while a lease of this store holds the run, read-only or not, and deletes nothing",
      async () => {
        const location = await writtenRun(fx);
        const store = runStore(fx);
        for (const options of [{}, { readOnly: true }]) {
          const lease = await store.open(location, options);
          const error = await failureOf(() => store.remove(location));
          expect(error.code).toBe("run_in_use");
          expect(error.message).toMatch(/release/);
          await lease.release();
          await expectIntact(fx, location);
        }
        await store.remove(location);
        await expectGone(fx, location, store);
      },
    );

    fx.needs("local", "walSharedMemory", "closeReleasesFile")
      .because(
        "a server's other clients are the server's to know; without shared memory the other connection locks the file for itself; and a closed connection must let go of the file",
      )
      .it(
        "refuses run_in_use while another connection has the run open, and deletes nothing",
        async () => {
          const location = await writtenRun(fx);
          const other = await fx.driver().open(location, {
            create: false,
            readOnly: false,
            busyTimeoutMs: 100,
          });
          try {
            await other.execute("SELECT count(*) FROM journal");
            const error = await failureOf(() => runStore(fx).remove(location));
            expect(error.code).toBe("run_in_use");
          } finally {
            await other.close();
          }
          await expectIntact(fx, location);
          await runStore(fx).remove(location);
          expect((await failureOf(() => runStore(fx).open(location))).code).toBe("not_found");
        },
      );

    fx.needs("childProcesses", "local", "walSharedMemory", "closeReleasesFile")
      .because(
        "another process holds the run open beside this one, and a closed connection must let go of the file",
      )
      .it(
        "refuses run_in_use while another process holds the run, and removes it once that process lets go",
        async () => {
          const location = await writtenRun(fx);
          const holder = await fx.holdWriteLock(location, ["SELECT count(*) FROM journal"]);
          try {
            const error = await failureOf(() => runStore(fx).remove(location));
            expect(error.code).toBe("run_in_use");
          } finally {
            await holder.release("rollback");
          }
          await expectIntact(fx, location);
          await runStore(fx).remove(location);
          expect((await failureOf(() => runStore(fx).open(location))).code).toBe("not_found");
        },
      );

    fx.needs("files")
      .because("another program's file is made on disk")
      .it("refuses to remove a file that is not a run, leaving it as found", async () => {
        const location = fx.location();
        writeFileSync(location, "not a database, but somebody's file");
        const error = await failureOf(() => runStore(fx).remove(location));
        expect(["not_a_database", "not_found"]).toContain(error.code);
        expect(existsSync(location)).toBe(true);
      });

    fx.needs("local", "closeReleasesFile")
      .because(
        `a statement fault stands in for a kill, and a server's removal is one request; ${LINGERS}`,
      )
      .it(
        "leaves the run intact, and says so, when any statement of a removal fails, or gone, and says that",
        async () => {
          const outcomes: string[] = [];
          for (let nth = 1; ; nth++) {
            const location = await writtenRun(fx);
            const faults = new FaultInjector(fx.driver());
            faults.arm({ nth });
            const error = await runStore(fx, { driver: faults.driver })
              .remove(location)
              .then(
                () => undefined,
                (e: unknown) => e,
              );
            if (error === undefined) {
              expect((await failureOf(() => runStore(fx).open(location))).code).toBe("not_found");
              outcomes.push("gone");
            } else {
              expect((error as { code?: string }).code).toBe("io_error");
              await expectIntact(fx, location);
              outcomes.push("intact");
            }
            // Past the last statement: the removal went through untouched.
            if (faults.fired === 0) break;
            expect(nth).toBeLessThan(100);
          }
          expect(outcomes).toContain("intact");
          expect(outcomes.at(-1)).toBe("gone");
        },
      );

    fx.needs("files", "closeReleasesFile")
      .because(`the deletion is cut short file by file; ${LINGERS}`)
      .it(
        "leaves the run intact or gone when its deletion stops after any of its files",
        async () => {
          const files = databaseFiles("x").length;
          for (let deleted = 0; deleted < files; deleted++) {
            const location = await writtenRun(fx);
            const error = await failureOf(() =>
              runStore(fx, { driver: cutShort(fx.driver(), deleted) }).remove(location),
            );
            expect(error).toBeDefined();
            // Every side file but the database itself may go: the run is still whole.
            await expectIntact(fx, location);
          }
        },
      );
  });
}
