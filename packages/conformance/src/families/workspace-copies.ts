/**
 * Workspace copies and conditional changes family (docs/api.md,
 * `tx.workspace.apply`): a copy places a file or a directory taken from a
 * root — the one the apply builds on, or any the run retains — at its target
 * by reference, so a new root built from others reads and writes only the
 * path to the target; puts and deletes inside a copied directory compose
 * with it; a source that is missing, pruned or collected is refused, nothing
 * written; what a retained root reaches through a copy survives pruning and
 * GC and verifies. An apply's expectations hold in the root it builds on or
 * nothing is written; a missing delete may be ignored; a missing stat may
 * answer undefined; an unknown name anywhere in an apply is refused.
 */

import type { ApplyChanges } from "@runledger/core";
import { describe, expect, it } from "vitest";
import { FaultInjector } from "../faults.js";
import { type Fixtures, failureOf } from "../fixtures.js";
import { runStore } from "./run-fixtures.js";
import {
  apply,
  count,
  expectRefusedUnchanged,
  expectWorkspace,
  type Model,
  newRun,
  sha256Hex,
  utf8,
} from "./workspace-fixtures.js";

/** A directory of `n` files under `directory`, above INLINE_MAX so each is an object of its own. */
function files(directory: string, n: number, seed = 0): Record<string, Uint8Array> {
  const out: Record<string, Uint8Array> = {};
  for (let i = 0; i < n; i++)
    out[`${directory}/f${i}.txt`] = utf8(`${seed}:${i}:`.padEnd(300, "x"));
  return out;
}

/** The model with every file below `from` also at `to` (or `to` replaced by `from`). */
function copied(model: Model, from: Model, source: string, target: string): Model {
  const next: Model = new Map(model);
  for (const key of [...next.keys()]) {
    if (key === target || key.startsWith(`${target}/`)) next.delete(key);
  }
  for (const [path, bytes] of from) {
    if (path === source) next.set(target, bytes);
    else if (source === "") next.set(`${target}/${path}`, bytes);
    else if (path.startsWith(`${source}/`)) next.set(target + path.slice(source.length), bytes);
  }
  return next;
}

const modelOf = (puts: Record<string, Uint8Array>): Model => new Map(Object.entries(puts));

export function describeWorkspaceCopies(fx: Fixtures): void {
  describe("workspace: copies", () => {
    it("places a file and a directory of the current root at new paths by reference: the root equals the same content written by puts", async () => {
      const { lease } = await newRun(fx);
      const puts = { ...files("big", 300), "small/a.txt": utf8("a"), "one.txt": utf8("1") };
      await apply(lease, { put: puts });
      const model = modelOf(puts);
      await apply(lease, {
        copy: {
          "copy/of-big": { from: "big" },
          "copy/of-small": { from: "small" },
          "two.txt": { from: "one.txt" },
        },
      });
      const expected = copied(
        copied(copied(model, model, "big", "copy/of-big"), model, "small", "copy/of-small"),
        model,
        "one.txt",
        "two.txt",
      );
      await expectWorkspace(lease, expected);
      expect((await lease.verify()).problems).toStrictEqual([]);
    });

    it("copies a directory of 300 files with no more statements than a single file: nothing below it is read", async () => {
      const { location, lease } = await newRun(fx);
      await apply(lease, { put: { ...files("big", 300), "one.txt": utf8("1") } });
      await lease.release();
      // A store of its own: nothing of the run is in its node cache.
      const traced = new FaultInjector(fx.driver());
      const cold = await runStore(fx, { driver: traced.driver }).open(location);
      const statementsOf = async (changes: ApplyChanges) => {
        const before = traced.statements.length;
        await apply(cold, changes);
        return traced.statements.length - before;
      };
      const one = await statementsOf({ copy: { "two.txt": { from: "one.txt" } } });
      const big = await statementsOf({ copy: { "big-2": { from: "big" } } });
      expect(big).toBeLessThanOrEqual(one + 2);
      expect(await count(cold, "workspace_object")).toBeGreaterThan(300);
    });

    it("copies from an older root, named by its event's sequence or by its id, and the whole root with from ''", async () => {
      const { lease } = await newRun(fx);
      const first = { "docs/a.txt": utf8("first a"), "docs/b.txt": utf8("first b") };
      const at = await apply(lease, { put: first });
      await apply(lease, { put: { "docs/a.txt": utf8("second a") }, delete: ["docs/b.txt"] });
      const now = modelOf({ "docs/a.txt": utf8("second a") });
      await apply(lease, { copy: { restored: { from: "docs", at: { sequence: at.sequence } } } });
      let expected = copied(now, modelOf(first), "docs", "restored");
      await expectWorkspace(lease, expected);
      await apply(lease, {
        copy: { "b-again.txt": { from: "docs/b.txt", at: { root: at.rootId } } },
      });
      expected = copied(expected, modelOf(first), "docs/b.txt", "b-again.txt");
      await expectWorkspace(lease, expected);
      await apply(lease, { copy: { snapshot: { from: "", at: { root: at.rootId } } } });
      expected = copied(expected, modelOf(first), "", "snapshot");
      await expectWorkspace(lease, expected);
    });

    it("composes a copy with puts and deletes inside the copied directory, and refuses overlapping targets with nothing written", async () => {
      const { lease } = await newRun(fx);
      const puts = { ...files("src", 40), "file.txt": utf8("f") };
      await apply(lease, { put: puts });
      const model = modelOf(puts);
      await apply(lease, {
        copy: { dst: { from: "src" } },
        put: { "dst/new.txt": utf8("new"), "dst/f1.txt": utf8("changed") },
        delete: ["dst/f2.txt"],
      });
      const expected = copied(model, model, "src", "dst");
      expected.set("dst/new.txt", utf8("new"));
      expected.set("dst/f1.txt", utf8("changed"));
      expected.delete("dst/f2.txt");
      await expectWorkspace(lease, expected);
      const overlapping: ApplyChanges[] = [
        { copy: { x: { from: "src" } }, put: { x: utf8("both") } },
        { copy: { x: { from: "src" }, "x/y": { from: "file.txt" } } },
        { copy: { x: { from: "src" } }, delete: ["x"] },
        { copy: { "x/y": { from: "src" } }, put: { x: utf8("parent as a file") } },
        { copy: { x: { from: "file.txt" } }, put: { "x/inside.txt": utf8("under a file") } },
      ];
      for (const changes of overlapping) {
        await expectRefusedUnchanged(lease, "path_conflict", () => apply(lease, changes));
      }
    });

    it("refuses a copy whose source is missing, pruned or collected with copy_source_not_found, nothing written", async () => {
      const { lease } = await newRun(fx);
      const old = await apply(lease, { put: { "old/a.txt": utf8("old") } });
      await apply(lease, { delete: ["old"], put: { "new.txt": utf8("n") } });
      const sources = [
        { from: "nowhere" },
        { from: "new.txt/below" },
        { from: "old" }, // gone from the current root
        { from: "old", at: { sequence: 99 } },
        { from: "old", at: { root: "0".repeat(64) } },
      ];
      for (const source of sources) {
        await expectRefusedUnchanged(lease, "copy_source_not_found", () =>
          apply(lease, { copy: { target: source } }),
        );
      }
      // Pruned: its event is gone; collected: its root is gone too.
      await apply(lease, { put: { "more.txt": utf8("m") } });
      await lease.transact((tx) => tx.workspace.prune({ before: old.sequence + 1 }));
      await expectRefusedUnchanged(lease, "copy_source_not_found", () =>
        apply(lease, { copy: { target: { from: "old", at: { sequence: old.sequence } } } }),
      );
      await lease.transact((tx) => tx.workspace.collectGarbage());
      const error = await failureOf(() =>
        apply(lease, { copy: { target: { from: "old", at: { root: old.rootId } } } }),
      );
      expect(error.code).toBe("copy_source_not_found");
      expect(error.details).toStrictEqual({ root: old.rootId });
    });

    it("keeps what a retained root reaches through a copy when the source's events are pruned and garbage is collected", async () => {
      const { lease } = await newRun(fx);
      const puts = files("keep", 200, 7);
      const first = await apply(lease, { put: puts });
      await apply(lease, { delete: ["keep"] });
      await apply(lease, { copy: { back: { from: "keep", at: { sequence: first.sequence } } } });
      const last = await apply(lease, { put: { "z.txt": utf8("z") } });
      await lease.transact((tx) => tx.workspace.prune({ before: last.sequence }));
      const report = await lease.transact((tx) => tx.workspace.collectGarbage());
      expect(report).toBeDefined();
      const expected = copied(new Map([["z.txt", utf8("z")]]), modelOf(puts), "keep", "back");
      await expectWorkspace(lease, expected);
      expect((await lease.verify()).problems).toStrictEqual([]);
    });
  });

  describe("workspace: conditional changes", () => {
    it("applies only when every expectation holds in the root it builds on, and names each failure with nothing written", async () => {
      const { lease } = await newRun(fx);
      const a = utf8("a");
      await apply(lease, { put: { "a.txt": a, "dir/b.txt": utf8("b") } });
      await apply(
        lease,
        { put: { "c.txt": utf8("c") } },
        {
          expect: {
            "c.txt": "absent",
            "a.txt": { digest: sha256Hex(a) },
            dir: "present",
            "dir/b.txt": "present",
            "dir/none": "absent",
            "a.txt/below": "absent",
          },
        },
      );
      expect(await lease.read((r) => r.workspace.list())).toHaveLength(3);
      let failure: { code?: string; details?: unknown } | undefined;
      await expectRefusedUnchanged(lease, "expectation_failed", () =>
        apply(
          lease,
          { put: { "d.txt": utf8("d") } },
          {
            expect: {
              "c.txt": "absent",
              "a.txt": { digest: "0".repeat(64) },
              dir: { digest: sha256Hex(a) },
              missing: "present",
              "a.txt/x": "absent",
            },
          },
        ).catch((error: unknown) => {
          failure = error as typeof failure;
          throw error;
        }),
      );
      expect(failure?.details).toStrictEqual({
        failures: [
          {
            path: "c.txt",
            expected: "absent",
            found: { kind: "file", digest: sha256Hex(utf8("c")) },
          },
          {
            path: "a.txt",
            expected: { digest: "0".repeat(64) },
            found: { kind: "file", digest: sha256Hex(a) },
          },
          { path: "dir", expected: { digest: sha256Hex(a) }, found: { kind: "directory" } },
          { path: "missing", expected: "present", found: "absent" },
        ],
      });
    });

    it("checks expectations against the current root even when another handle moved it since this lease's last write", async () => {
      const { store, location, lease } = await newRun(fx);
      await apply(lease, { put: { "x.txt": utf8("1") } });
      const other = await store.open(location);
      try {
        // The second handle shares the entry; a different store would have its own connection.
        await other.transact((tx) => tx.workspace.apply({ put: { "y.txt": utf8("2") } }));
      } finally {
        await other.release();
      }
      await expectRefusedUnchanged(lease, "expectation_failed", () =>
        apply(lease, { put: { "z.txt": utf8("3") } }, { expect: { "y.txt": "absent" } }),
      );
      await apply(lease, { put: { "z.txt": utf8("3") } }, { expect: { "y.txt": "present" } });
      expect((await lease.read((r) => r.workspace.list())).map((e) => e.name)).toStrictEqual([
        "x.txt",
        "y.txt",
        "z.txt",
      ]);
    });

    it("ignores a delete of a missing path under { missing: 'ignore' }, and stat answers undefined under { missing: 'undefined' }", async () => {
      const { lease } = await newRun(fx);
      await apply(lease, { put: { "a.txt": utf8("a") } });
      await expectRefusedUnchanged(lease, "path_not_found", () =>
        apply(lease, { delete: ["gone.txt"] }),
      );
      await apply(lease, { delete: ["gone.txt", "a.txt"] }, { missing: "ignore" });
      expect(await lease.read((r) => r.workspace.list())).toStrictEqual([]);
      expect(await lease.read((r) => r.workspace.stat("a.txt", { missing: "undefined" }))).toBe(
        undefined,
      );
      const error = await failureOf(() => lease.read((r) => r.workspace.stat("a.txt")));
      expect(error.code).toBe("path_not_found");
    });

    it("refuses an unknown name in an apply's changes, options, copy source or root point with invalid_argument, nothing written", async () => {
      const { lease } = await newRun(fx);
      await apply(lease, { put: { "a.txt": utf8("a") } });
      const wrong: [object, object][] = [
        [{ cpy: { b: { from: "a.txt" } } }, {}],
        [{ put: { "b.txt": utf8("b") } }, { expects: { "b.txt": "absent" } }],
        [{ copy: { b: { from: "a.txt", root: "x" } } }, {}],
        [{ copy: { b: { from: "a.txt", at: { sequence: 1, root: "x" } } } }, {}],
        [{ copy: { b: { form: "a.txt" } } }, {}],
        [{ put: { "b.txt": utf8("b") } }, { expect: { "b.txt": "missing" } }],
        [{ put: { "b.txt": utf8("b") } }, { expect: { "b.txt": { sha256: "0".repeat(64) } } }],
        [{ delete: ["a.txt"] }, { missing: "skip" }],
      ];
      for (const [changes, options] of wrong) {
        await expectRefusedUnchanged(lease, "invalid_argument", () =>
          apply(lease, changes as never, options as never),
        );
      }
      const stat = await failureOf(() =>
        lease.read((r) => r.workspace.stat("a.txt", { rot: "x" } as never)),
      );
      expect(stat.code).toBe("invalid_argument");
    });
  });
}
