/**
 * Workspace diff family (docs/api.md, `r.workspace.diff`): `r.workspace.diff(from, to)`
 * reports exactly the files a reference model says differ — added, removed
 * or modified, with each side's size and digest — in path order, between
 * roots named by id or by event; equal subtrees are not read (a one-file
 * change in a large tree reads a handful of nodes); a side the run no longer
 * holds is `root_not_found`, a malformed one `invalid_argument`.
 */
import type { RunLease, WorkspaceChange } from "@runledger/core";
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { FaultInjector } from "../faults.js";
import type { Fixtures } from "../fixtures.js";
import { runStore } from "./run-fixtures.js";
import {
  apply,
  applyToModel,
  codeOf,
  comparePaths,
  type Model,
  newRun,
  referenceApply,
  sha256Hex,
  utf8,
} from "./workspace-fixtures.js";

/** What a diff between two models must say, in path order. */
function referenceDiff(before: Model, after: Model): WorkspaceChange[] {
  const side = (bytes: Uint8Array) => ({
    kind: "file" as const,
    size: bytes.length,
    digest: sha256Hex(bytes),
  });
  const paths = [...new Set([...before.keys(), ...after.keys()])].sort(comparePaths);
  const out: WorkspaceChange[] = [];
  for (const path of paths) {
    const a = before.get(path);
    const b = after.get(path);
    if (a === undefined) out.push({ path, change: "added", after: side(b!) });
    else if (b === undefined) out.push({ path, change: "removed", before: side(a) });
    else if (sha256Hex(a) !== sha256Hex(b)) {
      out.push({ path, change: "modified", before: side(a), after: side(b) });
    }
  }
  return out;
}

async function diffOf(
  lease: RunLease,
  from: { root: string } | { sequence: number },
  to: { root: string } | { sequence: number },
): Promise<WorkspaceChange[]> {
  return lease.read(async (r) => {
    const out: WorkspaceChange[] = [];
    for await (const change of r.workspace.diff(from, to)) out.push(change);
    return out;
  });
}

/** Bytes that land in an object of their own (above INLINE_MAX) or in the entry, by size. */
const content = (seed: string, size: number) => utf8(seed.padEnd(size, "."));

export function describeWorkspaceDiff(fx: Fixtures): void {
  describe("workspace diff", () => {
    it("reports the files added, removed and modified between two roots, in path order, with each side's size and digest", async () => {
      const { lease } = await newRun(fx);
      let model: Model = new Map();
      const first: Record<string, Uint8Array> = {
        "a.txt": content("a", 10),
        "a-b/x": content("x", 400),
        "a/b/c.txt": content("c", 300),
        "a/b/d.txt": content("d", 5),
        "z/keep": content("keep", 1000),
        swap: content("file that becomes a directory", 20),
        "dir-to-file/inner": content("inner", 20),
      };
      const one = await apply(lease, { put: first });
      model = applyToModel(model, first, []);
      const before = new Map(model);
      const second = {
        put: {
          "a.txt": content("a changed", 10),
          "a/b/e.txt": content("e", 700),
          "swap/now": content("now a directory", 20),
          "dir-to-file": content("now a file", 20),
          "new/deep/file": content("deep", 3),
        },
        delete: ["a/b/d.txt", "a-b", "swap", "dir-to-file"],
      };
      const two = await apply(lease, {
        delete: second.delete,
      });
      const three = await apply(lease, { put: second.put });
      model = applyToModel(model, {}, second.delete);
      model = applyToModel(model, second.put, []);
      const expected = referenceDiff(before, model);
      expect(expected.length).toBeGreaterThan(5);
      expect(await diffOf(lease, { sequence: one.sequence }, { sequence: three.sequence })).toEqual(
        expected,
      );
      expect(await diffOf(lease, { root: one.rootId }, { root: three.rootId })).toEqual(expected);
      // Backwards, every change turned around.
      expect(await diffOf(lease, { root: three.rootId }, { root: one.rootId })).toEqual(
        referenceDiff(model, before),
      );
      expect(await diffOf(lease, { root: one.rootId }, { root: one.rootId })).toEqual([]);
      // Through an intermediate root, the deletes alone.
      expect(
        (await diffOf(lease, { sequence: one.sequence }, { sequence: two.sequence })).every(
          (change) => change.change === "removed",
        ),
      ).toBe(true);
    });

    it("agrees with a reference model over random batches of puts and deletes", async () => {
      const paths = ["a", "b", "a/x", "a/y", "a/y/z", "b/c", "ü", "ü/v", "c/d/e/f", "c/d/g"];
      const batch = fc.record({
        puts: fc.uniqueArray(
          fc.tuple(
            fc.constantFrom(...paths),
            fc.constantFrom(0, 3, 300),
            fc.integer({ min: 0, max: 3 }),
          ),
          { selector: ([path]) => path, maxLength: 4 },
        ),
        deletes: fc.array(fc.constantFrom(...paths), { maxLength: 2 }),
      });
      await fc.assert(
        fc.asyncProperty(fc.array(batch, { minLength: 2, maxLength: 5 }), async (batches) => {
          const { lease, store } = await newRun(fx);
          try {
            let model: Model = new Map();
            const roots: { model: Model; rootId: string }[] = [];
            for (const { puts, deletes } of batches) {
              const put: Record<string, Uint8Array> = {};
              for (const [path, size, seed] of puts) put[path] = content(`${seed}`, size);
              // A batch the rules refuse is left out: the workspace family checks refusals.
              if (referenceApply(model, Object.keys(put), deletes).codes.size > 0) continue;
              const result = await apply(lease, { put, delete: deletes });
              model = applyToModel(model, put, deletes);
              roots.push({ model, rootId: result.rootId });
            }
            for (let i = 1; i < roots.length; i++) {
              const a = roots[i - 1]!;
              const b = roots[i]!;
              expect(await diffOf(lease, { root: a.rootId }, { root: b.rootId })).toEqual(
                referenceDiff(a.model, b.model),
              );
            }
          } finally {
            await store.close();
          }
        }),
        { numRuns: 15 },
      );
    });

    it("reads only the nodes on the changed path: a one-file change in a tree of 5,000 files", async () => {
      const faults = new FaultInjector(fx.driver());
      const { lease, store, location } = await newRun(fx);
      const put: Record<string, Uint8Array> = {};
      for (let i = 0; i < 5_000; i++) {
        put[`d${i % 10}/f${String(i).padStart(5, "0")}`] = content(`${i}`, 40);
      }
      const one = await apply(lease, { put });
      const two = await apply(lease, { put: { "d3/f02503": content("changed", 40) } });
      await lease.release();
      await store.close();
      // A store with a cold node cache, counting what the diff reads.
      const counted = runStore(fx, { driver: faults.driver });
      try {
        const again = await counted.open(location);
        const from = faults.statements.length;
        const changes = await diffOf(again, { root: one.rootId }, { root: two.rootId });
        expect(changes.map((change) => [change.path, change.change])).toEqual([
          ["d3/f02503", "modified"],
        ]);
        const reads = faults.statements.slice(from).filter((sql) => /workspace_object/.test(sql));
        // The two tops, the changed directory's path on each side, and the neighbours
        // whose boundaries are compared: a handful, against the tree's hundreds of nodes.
        expect(reads.length).toBeLessThanOrEqual(24);
        expect(reads.length).toBeGreaterThan(0);
      } finally {
        await counted.close();
      }
    });

    it("refuses a side the run no longer holds with root_not_found, and a malformed one with invalid_argument", async () => {
      const { lease } = await newRun(fx);
      const one = await apply(lease, { put: { a: content("a", 300) } });
      await apply(lease, { put: { b: content("b", 300) } });
      await lease.transact((tx) => tx.workspace.prune({ before: one.sequence + 1 }));
      const consume = (from: unknown, to: unknown) =>
        lease.read(async (r) => {
          for await (const _ of r.workspace.diff(from as never, to as never)) {
            // consumed
          }
        });
      expect(await codeOf(consume({ sequence: one.sequence }, { sequence: 2 }))).toBe(
        "root_not_found",
      );
      expect(await codeOf(consume({ sequence: 99 }, { sequence: 2 }))).toBe("root_not_found");
      expect(await codeOf(consume({ root: sha256Hex("no such root") }, { sequence: 2 }))).toBe(
        "root_not_found",
      );
      for (const bad of [{ root: "ABC" }, { sequence: 0 }, { at: 1 }, {}, null, 3, undefined]) {
        expect(await codeOf(consume(bad, { sequence: 2 }))).toBe("invalid_argument");
        expect(await codeOf(consume({ sequence: 2 }, bad))).toBe("invalid_argument");
      }
    });
  });
}
