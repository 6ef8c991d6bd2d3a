/**
 * Workspace history family (docs/file-format.md): `history()` lists the roots in journal
 * order with the event that published each, and every listed root stays
 * readable; a fork is a new run whose workspace equals the source at the
 * chosen root and that holds only what that root reaches; garbage collection
 * after a prune deletes exactly the objects nothing retains — computed here
 * independently from the tables — and pins keep their roots through it.
 */
import { EMPTY_ROOT_ID, type HistoryEntry, type RunLease } from "@runledger/core";
import { CHUNK_SIZE } from "@runledger/core/engine";
import { describe, expect, it } from "vitest";
import type { Fixtures } from "../fixtures.js";
import {
  allObjects,
  apply,
  applyToModel,
  codeOf,
  dumpTables,
  expectWorkspace,
  type Model,
  minus,
  newRun,
  type ObjectSets,
  reachableFrom,
  referenceRootId,
  retainedRoots,
  sorted,
  storedTables,
  utf8,
} from "./workspace-fixtures.js";

function filled(length: number, seed: number): Uint8Array {
  const out = new Uint8Array(length);
  for (let i = 0; i < length; i++) out[i] = (i * 31 + seed * 17 + (i >>> 9)) & 0xff;
  return out;
}

async function historyOf(lease: RunLease): Promise<HistoryEntry[]> {
  return lease.read(async (r) => {
    const entries: HistoryEntry[] = [];
    for await (const entry of r.workspace.history()) entries.push(entry);
    return entries;
  });
}

/** The history the journal implies: each event whose root differs from the event before it. */
async function historyFromJournal(lease: RunLease): Promise<HistoryEntry[]> {
  return lease.read(async (r) => {
    const entries: HistoryEntry[] = [];
    let previous: string | undefined;
    for await (const event of r.journal.stream()) {
      if (event.rootId !== previous) {
        entries.push({ sequence: event.sequence, eventId: event.eventId, rootId: event.rootId });
      }
      previous = event.rootId;
    }
    return entries;
  });
}

const counts = (sets: ObjectSets) => ({
  nodes: sets.nodes.size,
  files: sets.files.size,
  chunks: sets.chunks.size,
});

const asSorted = (sets: ObjectSets) => ({
  nodes: sorted(sets.nodes),
  files: sorted(sets.files),
  chunks: sorted(sets.chunks),
});

/** Every file of a root as path, size, digest and bytes (small workspaces only). */
async function filesAt(lease: RunLease, root?: string) {
  const at = root === undefined ? {} : { root };
  return lease.read(async (r) => {
    const files = [];
    for await (const file of r.workspace.walk(undefined, at)) {
      const bytes = Buffer.from(await r.workspace.read(file.path, at)).toString("hex");
      files.push({ path: file.path, size: file.size, digest: file.digest, bytes });
    }
    return files;
  });
}

/**
 * Collects garbage and checks the report and the remaining rows against the
 * unreachable set computed from the tables before. Returns what was deleted.
 */
export async function collectAndCheck(lease: RunLease): Promise<ObjectSets> {
  const tables = await storedTables(lease);
  const live = reachableFrom(tables, retainedRoots(tables));
  const all = allObjects(tables);
  const gone: ObjectSets = {
    nodes: minus(all.nodes, live.nodes),
    files: minus(all.files, live.files),
    chunks: minus(all.chunks, live.chunks),
  };
  const report = await lease.transact((tx) => tx.workspace.collectGarbage());
  expect(report).toStrictEqual(counts(gone));
  const after = await storedTables(lease);
  expect(asSorted(allObjects(after))).toStrictEqual(asSorted(live));
  // The links of what remains are intact: every entry and chunk list points at a kept object.
  expect(asSorted(reachableFrom(after, retainedRoots(after)))).toStrictEqual(asSorted(live));
  expect((await lease.verify()).problems).toStrictEqual([]);
  return gone;
}

export function describeWorkspaceHistory(fx: Fixtures): void {
  describe("workspace: history", () => {
    it("lists each root in journal order with the event that published it; old roots stay readable", async () => {
      const { lease } = await newRun(fx);
      const models = new Map<number, Model>();
      let model: Model = new Map();
      await lease.transact((tx) => tx.journal.append({ kind: "start" }));
      models.set(1, model);
      const step = async (puts: Record<string, string>, deletes: string[] = []) => {
        model = applyToModel(
          model,
          Object.fromEntries(Object.entries(puts).map(([p, c]) => [p, utf8(c)])),
          deletes,
        );
        const result = await apply(lease, { put: puts, delete: deletes });
        expect(result.rootId).toBe(referenceRootId(model));
        models.set(result.sequence, model);
        return result;
      };
      const r1 = await step({ x: "1" }); // 2
      await lease.transact((tx) => tx.journal.append({ kind: "note" })); // 3, same root
      const r2 = await step({ "y/z": "2" }); // 4
      await step({ "y/z": "2" }); // 5, nothing changed
      const r4 = await step({}, ["y"]); // 6, back to r1's root
      const r5 = await step({}, ["x"]); // 7, back to empty
      expect(r4.rootId).toBe(r1.rootId);
      expect(r5.rootId).toBe(EMPTY_ROOT_ID);

      const history = await historyOf(lease);
      expect(history.map((h) => [h.sequence, h.rootId])).toStrictEqual([
        [1, EMPTY_ROOT_ID],
        [2, r1.rootId],
        [4, r2.rootId],
        [6, r1.rootId],
        [7, EMPTY_ROOT_ID],
      ]);
      expect(history).toStrictEqual(await historyFromJournal(lease));
      for (const entry of history) {
        await expectWorkspace(lease, models.get(entry.sequence)!, entry.rootId);
      }
    });

    it("pages through a long journal without losing or repeating a root", async () => {
      const { lease } = await newRun(fx);
      await lease.transact(async (tx) => {
        for (let i = 1; i <= 1_100; i++) {
          if (i % 100 === 0) await tx.workspace.apply({ put: { [`steps/${i}`]: String(i) } });
          else await tx.journal.append({ kind: "tick", i });
        }
      });
      const history = await historyOf(lease);
      expect(history.map((h) => h.sequence)).toStrictEqual([
        1,
        ...Array.from({ length: 11 }, (_, i) => (i + 1) * 100),
      ]);
      expect(history).toStrictEqual(await historyFromJournal(lease));
      expect(new Set(history.map((h) => h.rootId)).size).toBe(12);
    });
  });

  // A fork opens its source read-only beside the lease the test still holds:
  // two connections on one WAL file.
  fx.needs("walSharedMemory").describe("workspace: fork", () => {
    /** A source run with four roots; returns the models and results in order. */
    async function source() {
      const run = await newRun(fx);
      const big = filled(CHUNK_SIZE * 2 + 9, 1);
      let model: Model = new Map();
      const roots: { rootId: string; sequence: number; model: Model }[] = [];
      const step = async (puts: Record<string, Uint8Array>, deletes: string[] = []) => {
        model = applyToModel(model, puts, deletes);
        const result = await apply(run.lease, { put: puts, delete: deletes });
        roots.push({ ...result, model });
      };
      await step({
        "src/main.ts": utf8("main"),
        "src/util/a.ts": utf8("a"),
        "README.md": utf8("r"),
      });
      await step({ "assets/big.bin": big, "src/util/b.ts": utf8("b") });
      await run.lease.transact((tx) => tx.journal.append({ kind: "between" }));
      await step({ "src/main.ts": utf8("main v2") }, ["src/util"]);
      return { ...run, roots };
    }

    async function expectForkEquals(
      src: RunLease,
      fork: RunLease,
      root: string,
      model: Model,
    ): Promise<void> {
      expect(await fork.read((r) => r.workspace.currentRoot())).toBe(root);
      expect(await filesAt(fork)).toStrictEqual(await filesAt(src, root));
      await expectWorkspace(fork, model);
      expect(await fork.verify()).toMatchObject({ ok: true, problems: [] });
      // Only what the root reaches was copied; the fresh run's empty root is all else.
      const sourceTables = await storedTables(src);
      const reached = reachableFrom(sourceTables, [root]);
      const forkTables = await storedTables(fork);
      const expected = {
        nodes: new Set([...reached.nodes, EMPTY_ROOT_ID]),
        files: reached.files,
        chunks: reached.chunks,
      };
      expect(asSorted(allObjects(forkTables))).toStrictEqual(asSorted(expected));
      expect(asSorted(reachableFrom(forkTables, retainedRoots(forkTables)))).toStrictEqual(
        asSorted(expected),
      );
    }

    it("at an old sequence equals the source at that root and copies only what it reaches", async () => {
      const { store, lease, location, roots } = await source();
      const first = roots[0]!;
      const target = fx.location();
      const fork = await store.fork(location, target, {
        create: { workflowId: "conformance-workspace", runId: "forked-at-sequence" },
        at: { sequence: first.sequence },
      });
      expect(fork.rootId).toBe(first.rootId);
      await expectForkEquals(lease, fork.lease, first.rootId, first.model);
      // The big file added later is not in the fork.
      expect(await codeOf(fork.lease.read((r) => r.workspace.stat("assets/big.bin")))).toBe(
        "path_not_found",
      );
      const run = await fork.lease.read((r) => r.run.get());
      expect(run.runId).toBe("forked-at-sequence");
      const events = await fork.lease.read((r) => r.journal.list());
      expect(events).toHaveLength(1);
      expect(events[0]).toMatchObject({ sequence: fork.sequence, rootId: first.rootId });
      expect(await historyOf(fork.lease)).toStrictEqual([
        { sequence: fork.sequence, eventId: events[0]!.eventId, rootId: first.rootId },
      ]);
      // The fork lives on independently of its source.
      await apply(fork.lease, { put: { "only/in/fork": "f" } });
      expect(await codeOf(lease.read((r) => r.workspace.stat("only/in/fork")))).toBe(
        "path_not_found",
      );
    });

    it("at a root id, and by default at the current root, equals the source there", async () => {
      const { store, lease, location, roots } = await source();
      const second = roots[1]!;
      const byRoot = await store.fork(location, fx.location(), {
        create: { workflowId: "conformance-workspace", runId: "forked-at-root" },
        at: { root: second.rootId },
      });
      expect(byRoot.rootId).toBe(second.rootId);
      await expectForkEquals(lease, byRoot.lease, second.rootId, second.model);

      const last = roots[roots.length - 1]!;
      const byDefault = await store.fork(location, fx.location(), {
        create: { workflowId: "conformance-workspace", runId: "forked-at-current" },
      });
      expect(byDefault.rootId).toBe(last.rootId);
      await expectForkEquals(lease, byDefault.lease, last.rootId, last.model);
    });

    it("refuses a target that already has history, leaving it untouched", async () => {
      const { store, location } = await source();
      const other = await newRun(fx, { store });
      await apply(other.lease, { put: { mine: "mine" } });
      const before = await dumpTables(other.lease);
      const code = await codeOf(
        store.fork(location, other.location, {
          create: { workflowId: "conformance-workspace", runId: "someone-else" },
        }),
      );
      // A create naming another run is refused for the run's identity.
      expect(code).toBe("run_identity_mismatch");
      const run = await other.lease.read((r) => r.run.get());
      const same = await codeOf(
        store.fork(location, other.location, {
          create: { workflowId: run.workflowId, runId: run.runId },
        }),
      );
      expect(same).toBe("fork_target_not_empty");
      expect(await dumpTables(other.lease)).toStrictEqual(before);
      expect(
        await codeOf(
          store.fork(location, location, {
            create: { workflowId: "conformance-workspace", runId: "self" },
          }),
        ),
      ).toBe("invalid_argument");
    });

    it("refuses a sequence the source does not have and a root it does not hold, creating no target", async () => {
      const { store, location } = await source();
      const noSequence = fx.location();
      expect(
        await codeOf(
          store.fork(location, noSequence, {
            create: { workflowId: "conformance-workspace", runId: "no-such-sequence" },
            at: { sequence: 999 },
          }),
        ),
      ).toBe("invalid_argument");
      const noRoot = fx.location();
      expect(
        await codeOf(
          store.fork(location, noRoot, {
            create: { workflowId: "conformance-workspace", runId: "no-such-root" },
            at: { root: "ab".repeat(32) },
          }),
        ),
      ).toBe("root_not_found");
      // Refused before anything is written: neither target holds a run.
      for (const target of [noSequence, noRoot]) {
        expect(await codeOf(store.open(target))).toBe("not_found");
      }
    });
  });

  describe("workspace: prune, garbage collection and pins", () => {
    /**
     * Five roots whose objects overlap: a file made of chunks A+B later
     * replaced by A+C (B dies, A lives), a directory deleted, a pinned root
     * whose file nothing else keeps.
     */
    async function layered() {
      const run = await newRun(fx);
      const { lease } = run;
      const a = filled(CHUNK_SIZE, 2);
      const ab = Buffer.concat([a, filled(CHUNK_SIZE, 3)]);
      const ac = Buffer.concat([a, filled(1000, 4)]);
      const models: Model[] = [];
      let model: Model = new Map();
      const step = async (puts: Record<string, Uint8Array>, deletes: string[] = []) => {
        model = applyToModel(model, puts, deletes);
        const result = await apply(lease, { put: puts, delete: deletes });
        models.push(model);
        return result;
      };
      // c/ holds two inline files of 250 bytes: its node is too large to be held in its entry.
      const r1 = await step({
        "a/keep": utf8("keep"),
        "b/dead": ab,
        "c/x": utf8("x".repeat(250)),
        "c/y": utf8("y".repeat(250)),
      }); // 1
      const r2 = await step({ "b/dead": ac }); // 2
      const r3 = await step({ "p/pinned": filled(5000, 5) }, ["c"]); // 3
      const r4 = await step({}, ["p"]); // 4
      await lease.transact((tx) => tx.journal.append({ kind: "note" })); // 5
      const r5 = await step({ z: utf8("z") }); // 6
      return { ...run, roots: [r1, r2, r3, r4, r5] as const, models };
    }

    it("deletes exactly the unreachable set after a prune, and pins keep their roots", async () => {
      const { lease, roots, models } = await layered();
      const [r1, r2, r3, r4, r5] = roots;
      // Before any prune every root is retained by its event (and the empty root always is):
      // an apply stores only what its root reaches, so nothing goes.
      const first = await collectAndCheck(lease);
      expect(counts(first)).toStrictEqual({ nodes: 0, files: 0, chunks: 0 });
      const rootIds = roots.map((r) => r.rootId);

      await lease.transact(async (tx) => {
        await tx.workspace.pin("keep-r3", { root: r3.rootId });
        expect(await tx.workspace.prune({ before: 5 })).toBe(4);
      });
      const gone = await collectAndCheck(lease);
      // Every kind of object had something to collect, and the expectations are the obvious ones.
      // r1's and r2's roots, small, were held by the pruned events: no rows of their own to collect.
      expect(rootIds.filter((id) => gone.nodes.has(id))).toStrictEqual([]);
      expect(gone.nodes.size).toBeGreaterThan(0);
      expect(gone.files.size).toBeGreaterThan(0);
      expect(gone.chunks.size).toBeGreaterThan(0);
      // Retained roots read as before, collected ones are gone.
      await expectWorkspace(lease, models[2]!, r3.rootId);
      await expectWorkspace(lease, models[3]!, r4.rootId);
      await expectWorkspace(lease, models[4]!, r5.rootId);
      await expectWorkspace(lease, models[4]!);
      for (const root of [r1.rootId, r2.rootId]) {
        expect(await codeOf(lease.read((r) => r.workspace.list("", { root })))).toBe(
          "root_not_found",
        );
      }
      // A second collection finds nothing.
      expect(await lease.transact((tx) => tx.workspace.collectGarbage())).toStrictEqual({
        nodes: 0,
        files: 0,
        chunks: 0,
      });

      // Unpinned, the pinned root and what only it reached go too.
      expect(await lease.transact((tx) => tx.workspace.unpin("keep-r3"))).toBe(true);
      expect(await lease.transact((tx) => tx.workspace.unpin("keep-r3"))).toBe(false);
      const unpinned = await collectAndCheck(lease);
      expect(rootIds.filter((id) => unpinned.nodes.has(id))).toStrictEqual([r3.rootId]);
      expect(unpinned.files.size).toBe(1);
      expect(
        await codeOf(lease.read((r) => r.workspace.read("p/pinned", { root: r3.rootId }))),
      ).toBe("root_not_found");
      await expectWorkspace(lease, models[4]!);
    });

    it("keeps a pinned root through pruning everything before the newest event", async () => {
      const { lease, roots, models } = await layered();
      const oldest = roots[0]!;
      await lease.transact(async (tx) => {
        await tx.workspace.pin("oldest", { root: oldest.rootId });
        await tx.workspace.pin("current");
        await tx.workspace.prune({ before: 6 });
      });
      expect(await lease.read((r) => r.workspace.pins())).toStrictEqual([
        { name: "current", rootId: roots[4]!.rootId },
        { name: "oldest", rootId: oldest.rootId },
      ]);
      const gone = await collectAndCheck(lease);
      expect(gone.nodes.has(oldest.rootId)).toBe(false);
      await expectWorkspace(lease, models[0]!, oldest.rootId);
      expect(await historyOf(lease)).toStrictEqual(await historyFromJournal(lease));
      expect((await historyOf(lease)).map((h) => h.sequence)).toStrictEqual([6]);
    });

    it("moves a pin, refuses an unknown root, and refuses to prune the newest event", async () => {
      const { lease, roots } = await layered();
      await lease.transact((tx) => tx.workspace.pin("p", { root: roots[0]!.rootId }));
      await lease.transact((tx) => tx.workspace.pin("p", { root: roots[1]!.rootId }));
      expect(await lease.read((r) => r.workspace.pins())).toStrictEqual([
        { name: "p", rootId: roots[1]!.rootId },
      ]);
      const before = await dumpTables(lease);
      expect(
        await codeOf(lease.transact((tx) => tx.workspace.pin("q", { root: "cd".repeat(32) }))),
      ).toBe("root_not_found");
      expect(await codeOf(lease.transact((tx) => tx.workspace.prune({ before: 7 })))).toBe(
        "invalid_argument",
      );
      expect(await dumpTables(lease)).toStrictEqual(before);
    });

    it("a collection rolled back with its transaction deletes nothing", async () => {
      const { lease } = await layered();
      await lease.transact((tx) => tx.workspace.prune({ before: 6 }));
      const before = await dumpTables(lease);
      const stop = new Error("roll back");
      await expect(
        lease.transact(async (tx) => {
          const report = await tx.workspace.collectGarbage();
          expect(report.nodes).toBeGreaterThan(0);
          throw stop;
        }),
      ).rejects.toBe(stop);
      expect(await dumpTables(lease)).toStrictEqual(before);
    });

    it("deletes exactly the unreachable set when the objects fill several pages of the sweep", async () => {
      const { lease } = await newRun(fx);
      // 1,200 distinct files over 256 bytes, each an object of its own; collection and
      // verify read the object table 500 rows at a time.
      const puts: Record<string, Uint8Array> = {};
      for (let i = 0; i < 1200; i++) puts[`f/${i}`] = utf8(`${i} `.padEnd(300, "x"));
      await apply(lease, { put: puts });
      const doomed = Object.keys(puts).filter((_, i) => i % 3 !== 1);
      await apply(lease, { delete: doomed });
      await lease.transact((tx) => tx.workspace.prune({ before: 2 }));
      const gone = await collectAndCheck(lease);
      expect(gone.files.size).toBe(doomed.length);
      expect(counts(allObjects(await storedTables(lease))).files).toBe(1200 - doomed.length);
    });
  });
}
