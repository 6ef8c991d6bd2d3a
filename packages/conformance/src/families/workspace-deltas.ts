/**
 * Nodes stored as deltas (docs/file-format.md, "Nodes stored as deltas"):
 * a step's new node may be stored as its change to the node it replaced,
 * at most 16 deep; every version still reads back exactly, from a store
 * that has never seen it; garbage collection never leaves a delta without
 * its base; a fork stores its nodes whole; a broken chain is damage that
 * verify reports and a read refuses as `corrupt`. The tables are read here
 * by the conformance suite's own reader (`nodeBytes`), not by core's.
 */
import type { RunLease } from "@runledger/core";
import { describe, expect, it, onTestFinished } from "vitest";
import type { Fixtures } from "../fixtures.js";
import { raw, runStore } from "./run-fixtures.js";
import {
  apply,
  applyToModel,
  codeOf,
  expectWorkspace,
  type Model,
  newRun,
  nodeBytes,
  parseNode,
  reachableFrom,
  type StoredTables,
  storedTables,
} from "./workspace-fixtures.js";
import { collectAndCheck } from "./workspace-history.js";

/** The documented bound on a delta chain. */
const DEEPEST = 16;

/** ~200 bytes of content that differ per (file, version): inline files, so leaves are large. */
function content(file: number, version: number): Uint8Array {
  return new TextEncoder().encode(`file ${file} version ${version} `.padEnd(200, "."));
}

/** The node rows a root reaches, by id (hex), as stored (a directory held in its entry has none). */
function nodesOf(tables: StoredTables, root: string): Map<string, { kind: number; depth: number }> {
  const out = new Map<string, { kind: number; depth: number }>();
  for (const id of reachableFrom(tables, [root]).nodes) {
    const { kind, depth } = tables.objects.get(id)!;
    out.set(id, { kind, depth });
  }
  return out;
}

export function describeWorkspaceDeltas(fx: Fixtures): void {
  describe("workspace: nodes stored as deltas", () => {
    /** 60 files in one directory, then `edits` steps each rewriting the same file. */
    async function edited(edits: number) {
      const run = await newRun(fx);
      let model: Model = new Map();
      const models: Model[] = [];
      const roots: string[] = [];
      const step = async (puts: Record<string, Uint8Array>) => {
        model = applyToModel(model, puts, []);
        models.push(model);
        roots.push((await apply(run.lease, { put: puts })).rootId);
      };
      await step(
        Object.fromEntries(Array.from({ length: 60 }, (_, i) => [`d/f${i}`, content(i, 0)])),
      );
      for (let version = 1; version <= edits; version++) {
        await step({ "d/f7": content(7, version) });
      }
      return { ...run, models, roots };
    }

    /** The same run opened by a store of its own: no node of it cached (the caller released its lease). */
    async function cold(location: string): Promise<RunLease> {
      const lease = await runStore(fx).open(location);
      onTestFinished(() => lease.release());
      return lease;
    }

    it("stores a step's new nodes as deltas at most 16 deep, and every version reads back from a cold store", async () => {
      const { lease, location, models, roots } = await edited(40);
      const tables = await storedTables(lease);
      expect(Math.max(...[...tables.objects.values()].map((object) => object.depth))).toBe(DEEPEST);
      // The leaf holding d/f7, version by version: each a delta onto the one before,
      // until a version onto a 16-deep one, which is stored whole.
      const leafDepths = roots.map((root) => {
        const leaves = [...nodesOf(tables, root)].filter(([id]) => {
          const node = parseNode(nodeBytes(tables, id));
          return node.level === 0 && node.entries.some((entry) => entry.name === "f7");
        });
        expect(leaves).toHaveLength(1);
        return leaves[0]![1].depth;
      });
      expect(leafDepths).toStrictEqual(roots.map((_, version) => version % (DEEPEST + 1)));
      await lease.release();
      const reader = await cold(location);
      for (const [i, root] of roots.entries()) await expectWorkspace(reader, models[i]!, root);
      expect((await reader.verify()).problems).toStrictEqual([]);
    });

    it("garbage collection stores a kept delta whole before it deletes the delta's base", async () => {
      const { lease, location, models, roots } = await edited(3);
      const current = roots.at(-1)!;
      const before = nodesOf(await storedTables(lease), current);
      const deltas = [...before].filter(([, row]) => row.kind === 2).map(([id]) => id);
      expect(deltas.length).toBeGreaterThan(0);
      await lease.transact((tx) => tx.workspace.prune({ before: roots.length }));
      // Exactly the unreachable set goes, and every delta left has its base (nodeBytes checks).
      const gone = await collectAndCheck(lease);
      expect(gone.nodes.size).toBeGreaterThan(0);
      const after = nodesOf(await storedTables(lease), current);
      expect([...after.keys()].sort()).toStrictEqual([...before.keys()].sort());
      // The current leaf's delta was onto a version only pruned roots reached: it is whole now.
      expect(deltas.some((id) => after.get(id)!.kind === 0)).toBe(true);
      await lease.release();
      await expectWorkspace(await cold(location), models.at(-1)!, current);
    });

    it("a delta onto a node that garbage collection stores whole stays a delta and reads back", async () => {
      const { lease, location, models, roots } = await edited(3);
      // Keep the last two versions: the older one's base goes, the newer one's base stays.
      await lease.transact(async (tx) => {
        await tx.workspace.pin("previous", { root: roots.at(-2)! });
        await tx.workspace.prune({ before: roots.length });
      });
      const before = await storedTables(lease);
      const previous = nodesOf(before, roots.at(-2)!);
      const current = nodesOf(before, roots.at(-1)!);
      await collectAndCheck(lease);
      const after = await storedTables(lease);
      // The pinned version's new nodes were deltas onto a pruned version: now whole.
      const rewritten = [...previous.keys()].filter(
        (id) =>
          previous.get(id)!.kind === 2 && !current.has(id) && after.objects.get(id)!.kind === 0,
      );
      expect(rewritten.length).toBeGreaterThan(0);
      // The current version's deltas onto them are still deltas, deeper than their (whole) bases.
      const onRewritten = [...current.keys()].filter((id) => {
        const base = before.objects.get(id)!.data.subarray(0, 32).toString("hex");
        return current.get(id)!.kind === 2 && rewritten.includes(base);
      });
      expect(onRewritten.length).toBeGreaterThan(0);
      for (const id of onRewritten) expect(after.objects.get(id)!.kind).toBe(2);
      await lease.release();
      const reader = await cold(location);
      await expectWorkspace(reader, models.at(-2)!, roots.at(-2)!);
      await expectWorkspace(reader, models.at(-1)!, roots.at(-1)!);
      expect((await reader.verify()).problems).toStrictEqual([]);
    });

    fx.needs("walSharedMemory").it(
      "a fork stores every node whole and reads the same",
      async () => {
        const { store, location, models } = await edited(5);
        const fork = await store.fork(location, fx.location(), {
          create: { workflowId: "conformance-workspace", runId: "forked-deltas" },
        });
        onTestFinished(() => fork.lease.release());
        const tables = await storedTables(fork.lease);
        expect([...tables.objects.values()].filter((object) => object.kind === 2)).toStrictEqual(
          [],
        );
        await expectWorkspace(fork.lease, models.at(-1)!);
        expect((await fork.lease.verify()).problems).toStrictEqual([]);
      },
    );

    describe("a broken chain is damage", () => {
      /** The run after `edits` steps, released, then changed by raw SQL; reopened cold. */
      async function damaged(statements: (tables: StoredTables, current: string) => string[]) {
        const { lease, location, roots } = await edited(3);
        const tables = await storedTables(lease);
        await lease.release();
        await raw(fx, location, statements(tables, roots.at(-1)!));
        return cold(location);
      }
      const deepest = (tables: StoredTables, current: string) =>
        [...nodesOf(tables, current)].reduce((a, b) => (b[1].depth > a[1].depth ? b : a))[0];

      it("a delta whose base is missing is reported by verify and read as corrupt", async () => {
        const reader = await damaged((tables, current) => {
          const base = tables.objects.get(deepest(tables, current))!.data.subarray(0, 32);
          return [`DELETE FROM workspace_object WHERE id = X'${base.toString("hex")}'`];
        });
        expect((await reader.verify()).problems.join("\n")).toContain(
          "the base of a delta is missing",
        );
        expect(await codeOf(reader.read((r) => r.workspace.list("d")))).toBe("corrupt");
      });

      it("a delta no deeper than its base is reported by verify and read as corrupt", async () => {
        const reader = await damaged((tables, current) => {
          const id = deepest(tables, current);
          expect(tables.objects.get(id)!.depth).toBeGreaterThan(1);
          return [`UPDATE workspace_object SET depth = 1 WHERE id = X'${id}'`];
        });
        expect((await reader.verify()).problems.join("\n")).toContain(
          "a delta chain is not well-formed",
        );
        expect(await codeOf(reader.read((r) => r.workspace.list("d")))).toBe("corrupt");
      });
    });
  });
}
