/**
 * The run catalog family (docs/api.md, `store.list` and `store.reconcile`):
 * a store made with `catalog` lists the runs it creates, stops, resumes and
 * removes, newest first, filtered and paged. The catalog is a second
 * database, so it is only an index: the runs are the truth, a failed note
 * never fails the run's own work, the next open of a run mends its row, and
 * `reconcile` rebuilds rows from the runs — also after a kill at any
 * statement between a run's commit and the catalog's write.
 */
import { existsSync, writeFileSync } from "node:fs";
import { readFile } from "node:fs/promises";
import { basename, join } from "node:path";
import {
  isRunledgerError,
  type RunEntry,
  type RunLease,
  type RunStore,
  type RunStoreOptions,
} from "@runledger/core";
import { describe, expect, it } from "vitest";
import type {
  CatalogWriterReport,
  CatalogWriterRequest,
} from "../child/catalog-writer-protocol.js";
import {
  ChildProcess,
  type ChildScript,
  type Fixtures,
  failureOf,
  sha256Hex,
  subjectChild,
} from "../fixtures.js";
import { CREATE, runStore } from "./run-fixtures.js";

const CATALOG_WRITER: ChildScript<CatalogWriterRequest, CatalogWriterReport> = {
  file: "catalog-writer",
  name: "catalog writer",
};

/** How long one catalog-writer process may take from spawn to exit. */
const WRITER_TIMEOUT_MS = 60_000;

/** Why a removal right after this process closed the run is not tested where close leaves the file held. */
const LINGERS =
  "the driver frees a closed connection's native handle only when it is garbage-collected, and until then that handle keeps the file open, which a removal sees as another connection (docs/architecture.md)";

/** A store with a catalog at a fresh location (or the one given), and a clock the test moves. */
function catalogStore(
  fx: Fixtures,
  catalog = fx.location(),
  options: Partial<RunStoreOptions> = {},
): { store: RunStore; catalog: string; clock: { now: number } } {
  const clock = { now: 1_000 };
  const store = runStore(fx, { catalog, clock: () => clock.now, ...options });
  return { store, catalog, clock };
}

/** Creates a run at a fresh location through `store` and releases it. */
async function created(
  store: RunStore,
  location: string,
  identity: { workflowId?: string; runId?: string } = {},
  work: (lease: RunLease) => Promise<unknown> = async () => {},
): Promise<string> {
  const lease = await store.open(location, { create: { ...CREATE, ...identity } });
  await work(lease);
  await lease.release();
  return lease.location;
}

/** The run's entry as its own file tells it, read through the public API of a store without a catalog. */
async function entryOf(fx: Fixtures, location: string): Promise<RunEntry> {
  // A store of its own, closed at once: some drivers lock a file for the one connection holding it.
  const store = runStore(fx);
  const lease = await store.open(location, { readOnly: true });
  try {
    return await lease.read(async (r) => {
      const run = await r.run.get();
      const [newest] = await r.journal.list({ order: "desc", limit: 1 });
      return {
        location: lease.location,
        workflowId: run.workflowId,
        runId: run.runId,
        status: run.status,
        stopReason: run.stopReason,
        createdAt: run.createdAt,
        updatedAt: run.updatedAt,
        lastSequence: newest?.sequence ?? 0,
      };
    });
  } finally {
    await lease.release();
    await store.close();
  }
}

/** Runs `work` on a store without a catalog, then closes it: what the catalog does not hear of. */
async function withoutCatalog(
  fx: Fixtures,
  work: (store: RunStore) => Promise<void>,
): Promise<void> {
  const store = runStore(fx);
  try {
    await work(store);
  } finally {
    await store.close();
  }
}

/** Every run the store's catalog lists, through every page. */
async function listedAll(store: RunStore, limit = 2): Promise<RunEntry[]> {
  const runs: RunEntry[] = [];
  let after: string | undefined;
  do {
    const page = await store.list({ limit, ...(after === undefined ? {} : { after }) });
    expect(page.runs.length).toBeLessThanOrEqual(limit);
    runs.push(...page.runs);
    after = page.next;
  } while (after !== undefined);
  return runs;
}

async function locationsListed(
  store: RunStore,
  options: Parameters<RunStore["list"]>[0] = {},
): Promise<string[]> {
  return (await store.list(options)).runs.map((run) => run.location);
}

export function describeCatalog(fx: Fixtures): void {
  describe("run catalog", () => {
    // A server deletes its own way; a local file must be let go of by every closed connection.
    const removable = fx.remote ? fx.needs() : fx.needs("closeReleasesFile").because(LINGERS);

    it("lists the runs a store creates, newest first, each with identity, status, stop reason, times and last sequence", async () => {
      const { store, clock } = catalogStore(fx);
      const first = await created(store, fx.location(), { runId: "a" });
      clock.now = 2_000;
      const second = await created(store, fx.location(), { runId: "b" }, (lease) =>
        lease.transact(async (tx) => {
          await tx.journal.append({ n: 1 });
          await tx.journal.append({ n: 2 });
        }),
      );
      clock.now = 3_000;
      const third = await created(store, fx.location(), { runId: "c" }, async (lease) => {
        clock.now = 3_500;
        await lease.transact((tx) =>
          tx.run.stop({ status: "failed", reason: { host: "h", code: "oom" } }),
        );
      });
      const { runs, next } = await store.list();
      expect(next).toBeUndefined();
      expect(runs).toStrictEqual([
        await entryOf(fx, third),
        await entryOf(fx, second),
        await entryOf(fx, first),
      ]);
      expect(runs.map((run) => [run.runId, run.status, run.lastSequence])).toStrictEqual([
        ["c", "failed", 0],
        ["b", "running", 2],
        ["a", "running", 0],
      ]);
      expect(runs[0]).toMatchObject({
        workflowId: CREATE.workflowId,
        stopReason: { host: "h", code: "oom" },
        createdAt: 3_000,
        updatedAt: 3_500,
      });
    });

    it("filters by workflow, by one status or several, by creation and update time, and pages through every run once", async () => {
      const { store, clock } = catalogStore(fx);
      const made: Record<string, string> = {};
      for (const [index, [workflowId, status]] of [
        ["w1", "running"],
        ["w1", "completed"],
        ["w2", "interrupted"],
        ["w2", "running"],
        ["w1", "interrupted"],
      ].entries()) {
        clock.now = 1_000 * (index + 1);
        made[index] = await created(store, fx.location(), { workflowId }, async (lease) => {
          if (status !== "running") {
            await lease.transact((tx) => tx.run.stop({ status: status as "completed" }));
          }
        });
      }
      const all = await listedAll(store);
      expect(all.map((run) => run.location)).toStrictEqual([4, 3, 2, 1, 0].map((i) => made[i]));
      expect(await locationsListed(store, { workflowId: "w1" })).toStrictEqual(
        [4, 1, 0].map((i) => made[i]),
      );
      expect(await locationsListed(store, { status: "interrupted" })).toStrictEqual(
        [4, 2].map((i) => made[i]),
      );
      expect(
        await locationsListed(store, { workflowId: "w1", status: ["running", "interrupted"] }),
      ).toStrictEqual([4, 0].map((i) => made[i]));
      expect(await locationsListed(store, { createdAfter: 3_000 })).toStrictEqual(
        [4, 3].map((i) => made[i]),
      );
      expect(await locationsListed(store, { updatedAfter: 4_000 })).toStrictEqual([made[4]]);
      const page = await store.list({ status: ["running", "completed", "interrupted"], limit: 3 });
      expect(page.runs).toHaveLength(3);
      const rest = await store.list({
        status: ["running", "completed", "interrupted"],
        after: page.next,
      });
      expect([...page.runs, ...rest.runs].map((run) => run.location)).toStrictEqual(
        all.map((run) => run.location),
      );
      expect(rest.next).toBeUndefined();
    });

    it("shows a stop and a resume as soon as each commits, and the last sequence once the lease is released", async () => {
      const { store } = catalogStore(fx);
      const lease = await store.open(fx.location(), { create: CREATE });
      const status = async () => (await store.list()).runs.map((run) => run.status);
      await lease.transact((tx) => tx.run.stop({ status: "interrupted" }));
      expect(await status()).toStrictEqual(["interrupted"]);
      await lease.transact((tx) => tx.run.resume());
      expect(await status()).toStrictEqual(["running"]);
      await lease.transact((tx) => tx.journal.append({ step: 1 }));
      await lease.release();
      expect((await store.list()).runs).toStrictEqual([await entryOf(fx, lease.location)]);
    });

    removable.it("a removed run leaves the listing", async () => {
      const { store } = catalogStore(fx);
      const kept = await created(store, fx.location(), { runId: "kept" });
      const removed = await created(store, fx.location(), { runId: "removed" });
      await store.remove(removed);
      expect(await locationsListed(store)).toStrictEqual([kept]);
    });

    removable.it(
      "the next open mends a row that work done without the catalog left stale, and forgets a run removed without it",
      async () => {
        const first = catalogStore(fx);
        const stopped = await created(first.store, fx.location(), { runId: "stopped" });
        const gone = await created(first.store, fx.location(), { runId: "gone" });
        await first.store.close();
        await withoutCatalog(fx, async (elsewhere) => {
          const lease = await elsewhere.open(stopped);
          await lease.transact(async (tx) => {
            await tx.journal.append({ n: 1 });
            await tx.run.stop({ status: "completed" });
          });
          await lease.release();
          await elsewhere.remove(gone);
        });
        const { store, catalog } = catalogStore(fx, first.catalog);
        expect((await store.list()).runs.find((run) => run.location === stopped)?.status).toBe(
          "running",
        );
        await (await store.open(stopped)).release();
        expect((await failureOf(() => store.open(gone))).code).toBe("not_found");
        // A new store on the same catalog sees what the first one mended.
        await store.close();
        const again = catalogStore(fx, catalog).store;
        const runs = (await again.list()).runs;
        expect(runs).toContainEqual(await entryOf(fx, stopped));
        expect(runs.map((run) => run.location)).not.toContain(gone);
      },
    );

    removable.it(
      "reconcile rewrites the rows that differ from their runs and deletes the rows of runs that are gone",
      async () => {
        const first = catalogStore(fx);
        const same = await created(first.store, fx.location(), { runId: "same" });
        first.clock.now = 2_000;
        const changed = await created(first.store, fx.location(), { runId: "changed" });
        const gone = await created(first.store, fx.location(), { runId: "gone" });
        await first.store.close();
        await withoutCatalog(fx, async (elsewhere) => {
          const lease = await elsewhere.open(changed);
          await lease.transact((tx) => tx.run.stop({ status: "cancelled" }));
          await lease.release();
          await elsewhere.remove(gone);
        });
        const { store } = catalogStore(fx, first.catalog);
        const report = await store.reconcile();
        expect(report).toStrictEqual({
          added: [],
          updated: [changed],
          removed: [gone],
          skipped: [],
          unchanged: 1,
        });
        expect((await store.list()).runs).toStrictEqual([
          await entryOf(fx, changed),
          await entryOf(fx, same),
        ]);
        expect(await store.reconcile()).toMatchObject({ updated: [], removed: [], unchanged: 2 });
      },
    );

    fx.needs("files").it(
      "reconcile with a directory adds the runs found there, reports what is no run, and leaves the catalog and side files out",
      async () => {
        const directory = await fx.scratchDirectory();
        const first = catalogStore(fx, join(directory, "catalog.db"));
        const known = await created(first.store, join(directory, "known.run"), { runId: "known" });
        await first.store.close();
        const found: string[] = [];
        await withoutCatalog(fx, async (elsewhere) => {
          found.push(await created(elsewhere, join(directory, "found-1.run"), { runId: "f1" }));
          found.push(await created(elsewhere, join(directory, "found-2.run"), { runId: "f2" }));
        });
        const { store, catalog } = catalogStore(fx, first.catalog);
        writeFileSync(join(directory, "notes.txt"), "not a database, only notes\n".repeat(40));
        writeFileSync(join(directory, "found-1.run-journal"), "");
        const report = await store.reconcile({ directory });
        expect(report).toStrictEqual({
          added: found,
          updated: [],
          removed: [],
          skipped: [{ location: join(directory, "notes.txt"), code: "not_a_database" }],
          unchanged: 1,
        });
        expect((await store.list()).runs.map((run) => run.location).sort()).toStrictEqual(
          [known, ...found].sort(),
        );
        expect(basename(catalog)).toBe("catalog.db");
        const missing = await failureOf(() =>
          store.reconcile({ directory: join(directory, "no-such-directory") }),
        );
        expect([missing.code, missing.details?.missing]).toStrictEqual([
          "cannot_open",
          "directory",
        ]);
      },
    );

    it("reconcile with a directory through a driver that lists none is listing_unsupported, and without one still checks the rows", async () => {
      const { listDatabases: _, ...unlisting } = fx.driver();
      const { store } = catalogStore(fx, fx.location(), { driver: unlisting });
      await created(store, fx.location());
      const error = await failureOf(() => store.reconcile({ directory: "/tmp" }));
      expect(error.code).toBe("listing_unsupported");
      expect(error.message).toMatch(/reconcile\(\) without directory/);
      expect(await store.reconcile()).toMatchObject({ unchanged: 1 });
    });

    it("list and reconcile on a store without a catalog are catalog_missing, saying how to make one", async () => {
      const store = runStore(fx);
      for (const action of [() => store.list(), () => store.reconcile()]) {
        const error = await failureOf(action);
        expect(error.code).toBe("catalog_missing");
        expect(error.message).toMatch(/catalog: /);
      }
    });

    it("a malformed listing or reconcile argument is invalid_argument naming it, and a bad catalog option is refused at construction", async () => {
      const { store } = catalogStore(fx);
      await created(store, fx.location());
      const refused: [unknown, RegExp][] = [
        [{ limit: 0 }, /limit/],
        [{ limit: 10_001 }, /limit/],
        [{ limit: 1.5 }, /limit/],
        [{ after: "not-a-cursor" }, /after/],
        [{ status: "done" }, /status/],
        [{ status: ["running", "done"] }, /status/],
        [{ status: [] }, /status/],
        [{ workflowId: 5 }, /workflowId/],
        [{ createdAfter: "yesterday" }, /createdAfter/],
        [{ order: "asc" }, /order/],
      ];
      for (const [options, naming] of refused) {
        const error = await failureOf(() => store.list(options as never));
        expect([options, error.code]).toStrictEqual([options, "invalid_argument"]);
        expect(error.message).toMatch(naming);
      }
      for (const options of [{ dir: "/tmp" }, { directory: "" }]) {
        const error = await failureOf(() => store.reconcile(options as never));
        expect(error.code).toBe("invalid_argument");
      }
      // Refused before the catalog is opened: a store's first call, refused, creates no catalog.
      const untouched = fx.location();
      const fresh = catalogStore(fx, untouched).store;
      expect((await failureOf(() => fresh.list({ limit: 0 }))).code).toBe("invalid_argument");
      expect((await failureOf(() => fresh.reconcile({ dir: "." } as never))).code).toBe(
        "invalid_argument",
      );
      if (fx.files) expect(existsSync(untouched)).toBe(false);
      for (const catalog of ["", 7]) {
        expect(() => runStore(fx, { catalog: catalog as never })).toThrow(
          expect.objectContaining({ code: "invalid_argument" }),
        );
      }
    });

    it("a catalog location holding another database is refused when listed, left as found, and never fails the runs' own work", async () => {
      const other = await fx.database("CREATE TABLE notes (id INTEGER PRIMARY KEY, text TEXT)");
      const before = fx.files ? sha256Hex(await readFile(other)) : undefined;
      const { store } = catalogStore(fx, other);
      const run = await created(store, fx.location(), {}, (lease) =>
        lease.transact((tx) => tx.run.stop({ status: "completed" })),
      );
      expect((await entryOf(fx, run)).status).toBe("completed");
      const error = await failureOf(() => store.list());
      expect(error.code).toBe("foreign_database");
      if (before !== undefined) expect(sha256Hex(await readFile(other))).toBe(before);
    });

    fx.needs("childProcesses", "crashSafeLocks")
      .because("the writer is killed holding its locks, which must not outlive it")
      .it(
        "after a kill at any statement of a run's life, the next open of the run or a reconcile leaves its row as the run is",
        async () => {
          const child = subjectChild(fx.subject);
          const write = (work: Omit<CatalogWriterRequest, "module" | "exportName">) =>
            ChildProcess.start(CATALOG_WRITER, child, work);
          const whole = await write({ location: fx.location(), catalog: fx.location() }).report(
            WRITER_TIMEOUT_MS,
          );
          expect(whole.statements).toBeGreaterThan(10);
          for (let killAt = 1; killAt <= whole.statements; killAt++) {
            const directory = fx.files ? await fx.scratchDirectory() : undefined;
            const at = (name: string) =>
              directory === undefined ? fx.location() : join(directory, name);
            const location = at("run.db");
            const catalog = at("catalog.db");
            const exit = await write({ location, catalog, killAt }).exited;
            expect([killAt, exit]).toStrictEqual([killAt, null]);
            const { store } = catalogStore(fx, catalog);
            // Odd kills are mended by opening the run, even ones by a reconcile of its directory.
            let run: RunEntry | undefined;
            try {
              run = await entryOf(fx, location);
            } catch (error) {
              if (!isRunledgerError(error)) throw error;
            }
            if (killAt % 2 === 1 || directory === undefined) {
              if (run !== undefined) await (await store.open(location)).release();
            } else {
              await store.reconcile({ directory });
            }
            const listed = (await store.list()).runs;
            expect([killAt, listed]).toStrictEqual([
              killAt,
              run === undefined ? [] : [await entryOf(fx, location)],
            ]);
            await store.close();
          }
        },
        // One process a statement: a few dozen spawns.
        600_000,
      );
  });
}
