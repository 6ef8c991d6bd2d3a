/**
 * Read-only opens (docs/contracts.md): `store.open(location, { readOnly: true })`
 * reads an existing run without writing anything — the file's bytes and the
 * files beside it are exactly as found afterwards, for a run in WAL mode and
 * for one in rollback-journal mode, in a read-only directory too — and every
 * write through its lease is refused with `read_only`. A plain open of a run
 * whose file or directory this process may not write is `read_only` too,
 * pointing to `{ readOnly: true }`, and leaves it as found. Also here: a
 * SQLite file with no tables is described as such, not as an empty file.
 */
import { spawnSync } from "node:child_process";
import { chmod, copyFile, mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { type RunLease, RunStore } from "@runledger/core";
import { expect, it, onTestFinished } from "vitest";
import { type Fixtures, failureOf } from "../fixtures.js";
import { unavailable } from "../requirements.js";
import { probeOpen } from "./open-cost.js";
import { CREATE, createdRun, fingerprint, openRun, runStore, v1BaseFile } from "./run-fixtures.js";

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

  describeUnwritable(fx, rollbackBase);
}

/** The user the open probe runs as when this process is root: nobody. */
const NOBODY = { uid: 65534, gid: 65534 } as const;

/**
 * Who may prove what a permission bit refuses: this process's own user,
 * unless it is root, which ignores permission bits — then a probe process
 * started as nobody, where this root may start one. Undefined `as`: the
 * probe runs as this process's user; a string: why it cannot be proven here.
 */
function unprivilegedUser(): { readonly as?: typeof NOBODY } | string {
  if (process.getuid === undefined) return "this platform has no user ids";
  if (process.getuid() !== 0) return {};
  const started = spawnSync(process.execPath, ["-e", ""], { ...NOBODY, stdio: "ignore" });
  if (started.error === undefined && started.status === 0) return { as: NOBODY };
  return "this process is root, which ignores them, and may not start a process as nobody";
}

/**
 * A plain open of a run this process may not write — the file mode 0444, or
 * its directory mode 0555 — is refused as `read_only` before anything is
 * touched, pointing to `{ readOnly: true }`, which then reads it. Run in the
 * open probe, as nobody when this process is root.
 */
function describeUnwritable(fx: Fixtures, rollbackBase: () => Promise<string>): void {
  const user = unprivilegedUser();
  const gate =
    typeof user === "string"
      ? unavailable("a user bound by permission bits", user)
      : fx.needs("files", "local", "childProcesses");
  const makers = {
    WAL: async () => createdRun(fx, {}, join(await fx.scratchDirectory(), "run.sqlite")),
    "rollback-journal": rollbackBase,
  } as const;
  gate.describe("a plain open of a run it may not write", () => {
    for (const mode of ["WAL", "rollback-journal"] as const) {
      for (const unwritable of ["file", "directory"] as const) {
        gate.it(
          `of a ${mode} run whose ${unwritable} it may not write is read_only, points to { readOnly: true } and leaves the run as found`,
          async () => {
            if (typeof user === "string") return expect.fail(user);
            // A directory of its own, which the user nobody may enter (the suite's
            // scratch directories are 0700), holding the database file alone (no
            // side file of the writer's).
            const directory = await mkdtemp(join(tmpdir(), "runledger-unwritable-"));
            onTestFinished(async () => {
              await chmod(directory, 0o700);
              await rm(directory, { recursive: true, force: true });
            });
            const location = join(directory, "run.sqlite");
            await copyFile(await makers[mode](), location);
            await chmod(location, unwritable === "file" ? 0o444 : 0o666);
            await chmod(directory, unwritable === "directory" ? 0o555 : 0o777);
            const before = await fingerprint(location);

            const plain = await probeOpen(fx, { location }, user.as);
            expect(plain.outcome).toMatchObject({
              ok: false,
              code: "read_only",
              details: { notWritable: unwritable },
            });
            expect(plain.outcome.ok === false && plain.outcome.message).toContain(
              "{ readOnly: true }",
            );
            expect(await fingerprint(location)).toEqual(before);

            // The hint holds: a read-only open reads it. In a directory it may not
            // write only where read-only opens need no lock file beside the run
            // (adapter-wasm's VFS locks with a directory it creates there).
            if (unwritable === "file" || fx.has("walSharedMemory")) {
              const reading = await probeOpen(fx, { location, readOnly: true }, user.as);
              expect(reading.outcome).toEqual({ ok: true });
              expect(await fingerprint(location)).toEqual(before);
            }
          },
        );
      }
    }
  });
}
