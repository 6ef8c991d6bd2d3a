/**
 * Read-only opens (docs/contracts.md): `store.open(location, { readOnly: true })`
 * reads an existing run without writing anything — the file's bytes and the
 * files beside it are exactly as found afterwards, for a run in WAL mode and
 * for one in rollback-journal mode, in a read-only directory too — and every
 * write through its lease is refused with `read_only`. Also here: a SQLite
 * file with no tables is described as such, not as an empty file.
 */
import { chmod, copyFile, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { type RunLease, RunStore } from "@runledger/core";
import { expect, it } from "vitest";
import { type Fixtures, failureOf } from "../fixtures.js";
import { CREATE, fingerprint, openRun, runStore, v1BaseFile } from "./run-fixtures.js";

/** Everything a read command reads: the run row, the journal, a file, the schema, a deep verify. */
async function readEverything(lease: RunLease) {
  const seen = await lease.read(async (r) => ({
    run: await r.run.get(),
    events: (await r.journal.list()).map((e) => e.record),
    files: await r.workspace.list(),
    counts: await r.counts(),
  }));
  const report = await lease.verify();
  return { ...seen, ok: report.ok };
}

export function describeReadOnly(fx: Fixtures): void {
  const rollbackBase = v1BaseFile(fx);

  // SQLite reads a WAL file read-only through its shared-memory index (-shm).
  fx.needs("files", "local", "walSharedMemory").describe("read-only opens", () => {
    /**
     * A WAL run alone in a new directory: three events and a file. Written
     * elsewhere, then its database file copied alone once its store closed
     * (which leaves it whole, see the close family): a driver whose handle
     * closes later (libSQL) may remove side files beside the original at
     * any moment, never beside the copy.
     */
    const walRun = async () => {
      const written = join(await fx.scratchDirectory(), "written.sqlite");
      const location = join(await fx.scratchDirectory(), "run.sqlite");
      const store = new RunStore({ driver: fx.driver() });
      try {
        const lease = await store.open(written, { create: CREATE });
        await lease.transact(async (tx) => {
          await tx.journal.append({ step: "fetch" });
          await tx.workspace.apply({ put: { "out/report.txt": "done" } });
          await tx.journal.append({ step: "build" });
        });
        await lease.release();
      } finally {
        await store.close();
      }
      await copyFile(written, location);
      return location;
    };
    const rollbackRun = async () => {
      const location = join(await fx.scratchDirectory(), "run.sqlite");
      await copyFile(await rollbackBase(), location);
      return location;
    };

    for (const [mode, make, events] of [
      ["WAL", walRun, 3],
      ["rollback-journal", rollbackRun, 2],
    ] as const) {
      it(`reads a ${mode} run and leaves its bytes and directory listing unchanged`, async () => {
        const location = await make();
        const before = await fingerprint(location);
        const store = runStore(fx);
        const lease = await store.open(location, { readOnly: true });
        expect(lease.readOnly).toBe(true);
        const seen = await readEverything(lease);
        expect(seen.events).toHaveLength(events);
        expect(seen.ok).toBe(true);
        expect(await fingerprint(location)).toEqual(before);
        await lease.release();
        await store.close();
        expect(await fingerprint(location)).toEqual(before);
      });

      it(`refuses every write through a read-only lease of a ${mode} run with read_only`, async () => {
        const location = await make();
        const before = await fingerprint(location);
        const lease = await runStore(fx).open(location, { readOnly: true });
        const writes: [string, () => Promise<unknown>][] = [
          ["append", () => lease.transact((tx) => tx.journal.append({ n: 1 }))],
          ["apply", () => lease.transact((tx) => tx.workspace.apply({ put: { a: "a" } }))],
          ["stop", () => lease.transact((tx) => tx.run.stop({ status: "failed" }))],
        ];
        for (const [what, write] of writes) {
          const error = await failureOf(write);
          expect(error.code, what).toBe("read_only");
          expect(error.message, what).toMatch(/without readOnly/);
        }
        // Reads still work after the refusals, and still refuse writes after a read.
        expect((await readEverything(lease)).events).toHaveLength(events);
        expect((await failureOf(() => lease.transact(async () => 1))).code).toBe("read_only");
        await lease.release();
        expect(await fingerprint(location)).toEqual(before);
      });

      it(`reads a ${mode} run whose file is mode 0444 in a read-only directory`, async () => {
        const location = await make();
        const directory = join(location, "..");
        await chmod(location, 0o444);
        await chmod(directory, 0o555);
        try {
          const before = await fingerprint(location);
          const store = runStore(fx);
          const lease = await store.open(location, { readOnly: true });
          expect((await readEverything(lease)).events).toHaveLength(events);
          await lease.release();
          await store.close();
          expect(await fingerprint(location)).toEqual(before);
        } finally {
          await chmod(directory, 0o755);
          await chmod(location, 0o644);
        }
      });
    }

    it("sees what a writer of the same run has committed, creating nothing", async () => {
      const location = join(await fx.scratchDirectory(), "run.sqlite");
      const writer = await openRun(fx, location);
      await writer.transact((tx) => tx.journal.append({ n: 1 }));
      const before = await fingerprint(location);
      const reader = await runStore(fx).open(location, { readOnly: true });
      expect((await reader.read((r) => r.journal.list())).map((e) => e.record)).toEqual([{ n: 1 }]);
      await reader.release();
      expect((await fingerprint(location)).listing).toEqual(before.listing);
    });

    it("refuses a -wal whose -shm is missing with needs_recovery and creates nothing", async () => {
      const location = join(await fx.scratchDirectory(), "run.sqlite");
      const writer = await openRun(fx, location);
      await writer.transact((tx) => tx.journal.append({ n: 1 }));
      // A copy taken while the writer has it open: the commit is in the -wal only.
      const copy = join(await fx.scratchDirectory(), "copy.sqlite");
      await copyFile(location, copy);
      await copyFile(`${location}-wal`, `${copy}-wal`);
      const before = await fingerprint(copy);
      expect(before.listing).toEqual(["copy.sqlite", "copy.sqlite-wal"]);
      const error = await failureOf(() => runStore(fx).open(copy, { readOnly: true }));
      expect(error.code).toBe("needs_recovery");
      expect(await fingerprint(copy)).toEqual(before);
    });

    it("answers a missing run with not_found and creates nothing", async () => {
      const location = join(await fx.scratchDirectory(), "missing.sqlite");
      const error = await failureOf(() => runStore(fx).open(location, { readOnly: true }));
      expect(error.code).toBe("not_found");
      expect((await fingerprint(location)).listing).toEqual([]);
    });

    it("refuses readOnly together with create", async () => {
      const location = join(await fx.scratchDirectory(), "run.sqlite");
      const error = await failureOf(() =>
        runStore(fx).open(location, { readOnly: true, create: CREATE }),
      );
      expect(error.code).toBe("invalid_argument");
      expect((await fingerprint(location)).listing).toEqual([]);
    });

    it("answers an empty file with not_found and leaves it empty", async () => {
      const location = join(await fx.scratchDirectory(), "run.sqlite");
      await writeFile(location, "");
      const before = await fingerprint(location);
      const error = await failureOf(() => runStore(fx).open(location, { readOnly: true }));
      expect(error.code).toBe("not_found");
      expect(await fingerprint(location)).toEqual(before);
    });
  });

  fx.needs("files", "local").describe("a SQLite file with no tables", () => {
    it("is described as a database with no tables, not as an empty file", async () => {
      const location = await fx.database("CREATE TABLE gone (x); DROP TABLE gone");
      const before = await fingerprint(location);
      expect(before.size).toBeGreaterThan(0);
      for (const options of [{}, { readOnly: true }]) {
        const error = await failureOf(() => runStore(fx).open(location, options));
        expect(error.code).toBe("not_found");
        expect(error.message).toMatch(/SQLite database with no tables/);
        expect(error.message).not.toMatch(/empty/);
      }
      expect(await fingerprint(location)).toEqual(before);
    });

    it("still says an empty file is empty", async () => {
      const location = join(await fx.scratchDirectory(), "run.sqlite");
      await writeFile(location, "");
      const error = await failureOf(() => runStore(fx).open(location));
      expect(error.message).toMatch(/the file is empty/);
    });
  });
}
