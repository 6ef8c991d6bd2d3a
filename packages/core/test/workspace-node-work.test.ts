/**
 * The tree work of an apply is synchronous while its nodes are at hand and
 * reads a missing node from the database only when it reaches it
 * (workspace/node-work.ts). These tests pin both halves: no promise when
 * nothing is missing, and, from a cold cache, the same nodes as a warm edit,
 * each stored node read a bounded number of times (no work redone), and the
 * same errors. And the map key every node and file is found by (idKey).
 */
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { toHex } from "../src/port/bytes.js";
import { RunledgerError } from "../src/port/errors.js";
import { portableHash } from "../src/port/hash.js";
import { idKey } from "../src/workspace/id-key.js";
import { type DirectoryNode, INLINE_MAX, type Item } from "../src/workspace/node.js";
import { NodeCache } from "../src/workspace/node-cache.js";
import { NodeLoader } from "../src/workspace/node-loader.js";
import { BYTES } from "../src/workspace/object-rows.js";
import { applyPlan, planEdits } from "../src/workspace/plan.js";
import { buildDirectory, type Change, editDirectory, lookup } from "../src/workspace/trees.js";

const file = (name: string, seed: number): Item => {
  const target = new Uint8Array(32);
  target[0] = seed & 0xff;
  target[1] = (seed >>> 8) & 0xff;
  target[2] = (seed >>> 16) & 0xff;
  return { name, kind: "file", target, size: INLINE_MAX + 1 + seed };
};

const warmOnly = {
  execute: () => Promise.reject(new Error("the database was asked for a node")),
};

/** A database holding the given nodes, counting the reads of each. */
function storedNodes(nodes: readonly DirectoryNode[]) {
  const rows = new Map(nodes.map((node) => [idKey(node.id), node.bytes!]));
  const reads = new Map<string, number>();
  const executor = {
    execute: async (_sql: string, params?: readonly unknown[]) => {
      // A lookup by id binds the id's key-index prefix, then the id (workspace/object-key.ts).
      const key = idKey(params!.at(-1) as Uint8Array);
      reads.set(key, (reads.get(key) ?? 0) + 1);
      const data = rows.get(key);
      return {
        rows: data === undefined ? [] : [{ kind: BYTES, data }],
        changes: 0,
        lastInsertRowid: undefined,
      };
    },
  };
  return { executor, reads, rows };
}

const padded = (i: number) => `m-${String(i).padStart(6, "0")}`;

/** A directory of `files` files m-000000, m-000001, …, built in a loader that never reads. */
function warmDirectory(files: number): { warm: NodeLoader; top: DirectoryNode } {
  const warm = new NodeLoader(warmOnly, new NodeCache());
  const items = Array.from({ length: files }, (_, i) => file(padded(i), i));
  return { warm, top: buildDirectory(warm, portableHash, items) };
}

describe("tree work without promises when its nodes are at hand", () => {
  it("an edit, a lookup and a plan over nodes at hand return their results, not promises", () => {
    const { warm: loader, top } = warmDirectory(5000);
    expect(top.level).toBeGreaterThan(1);

    const found = lookup(loader, top, padded(1234));
    expect(found).not.toBeInstanceOf(Promise);
    expect((found as Item | undefined)?.name).toBe(padded(1234));

    const edited = editDirectory(loader, portableHash, top, [
      [padded(10), null],
      [`${padded(2500)}a`, file("x", 1)],
    ]);
    expect(edited).not.toBeInstanceOf(Promise);
    expect((edited as DirectoryNode).id).not.toEqual(top.id);

    const root = buildDirectory(loader, portableHash, [
      { name: "state", kind: "directory", target: top.id, size: 0 },
    ]);
    const plan = planEdits([[["state", padded(7)], file(padded(7), 99)]], [["state", padded(8)]]);
    const planned = applyPlan(loader, portableHash, root, plan, []);
    expect(planned).not.toBeInstanceOf(Promise);
  });

  it("a large batch into a cold directory of 100,000 reads each stored node at most twice and builds what a warm edit builds", async () => {
    const { warm, top } = warmDirectory(100_000);
    const stored = warm.pending();
    // 2,000 changes spread over the whole directory: the edit's window is every leaf.
    const changes: Change[] = [];
    for (let i = 0; i < 100_000; i += 50) {
      changes.push(i % 100 === 0 ? [padded(i), null] : [`${padded(i)}a`, file("n", i)]);
    }
    changes.sort(([a], [b]) => (a < b ? -1 : 1));
    // The warm edit: every stored node cached, so `pending` holds just what the edit built.
    const cache = new NodeCache(stored.length);
    for (const node of stored) cache.set(idKey(node.id), node);
    const hot = new NodeLoader(warmOnly, cache);
    const expected = (await editDirectory(hot, portableHash, top, changes)) as DirectoryNode;
    const warmBuilt = hot.pending().map((node) => toHex(node.id));

    const database = storedNodes(stored);
    // A cache smaller than the directory: nodes fall out of it while the edit runs.
    const cold = new NodeLoader(database.executor, new NodeCache(1024));
    const edited = editDirectory(cold, portableHash, top, changes);
    expect(edited).toBeInstanceOf(Promise);
    const after = await edited;

    expect(toHex(after.id)).toBe(toHex(expected.id));
    // Nothing computed twice: exactly the nodes the warm edit built, no orphans from a retry.
    expect(cold.pending().map((node) => toHex(node.id))).toEqual(warmBuilt);
    expect(database.reads.size).toBeGreaterThan(stored.length / 2);
    // A node is read at most once by the descent to the batch's last name and
    // once by each level's walk that passes it (its own level's and those
    // below), each time only if the small cache has let it go: a node of
    // level k at most k + 2 times. So the work is linear in the nodes stored,
    // whatever the machine's speed (a time limit here only failed on a loaded
    // machine; the count is exact).
    const levels = new Map(stored.map((node) => [idKey(node.id), node.level]));
    for (const [key, count] of database.reads) {
      expect(count).toBeLessThanOrEqual(levels.get(key)! + 2);
    }
    expect([...database.reads.values()].reduce((a, b) => a + b)).toBeLessThan(1.1 * stored.length);
  }, 300_000); // 100,000 names built and edited twice: minutes on a loaded machine, no limit on the result

  it("a plan into a cold nested tree reads the directories it reaches and gives the warm root", async () => {
    const { warm, top: inner } = warmDirectory(3000);
    const root = buildDirectory(warm, portableHash, [
      { name: "a", kind: "directory", target: inner.id, size: 0 },
      { name: "b", kind: "directory", target: inner.id, size: 0 },
    ]);
    const plan = () =>
      planEdits(
        [
          [["a", padded(5)], file(padded(5), 7)],
          [["a", "new", "deep"], file("deep", 8)],
          [["c", "x"], file("x", 9)],
        ],
        [
          ["b", padded(2999)],
          ["b", padded(0)],
        ],
      );
    const expected = (await applyPlan(warm, portableHash, root, plan(), [])) as DirectoryNode;

    const database = storedNodes(warm.pending());
    const cold = new NodeLoader(database.executor, new NodeCache());
    const coldRoot = await cold.load(root.id);
    const after = await applyPlan(cold, portableHash, coldRoot, plan(), []);
    expect(toHex(after!.id)).toBe(toHex(expected.id));
    expect(database.reads.size).toBeGreaterThan(2);
  });

  it("a node the edit reaches that the database lacks, or holds garbled, fails it as corrupt", async () => {
    const { warm, top } = warmDirectory(3000);
    const leafOf1500 = warm
      .pending()
      .find((node) => node.level === 0 && node.items.some((item) => item.name === padded(1500)))!;
    const change: Change[] = [[padded(1500), null]];

    const missing = storedNodes(warm.pending());
    missing.rows.delete(idKey(leafOf1500.id));
    const lacking = new NodeLoader(missing.executor, new NodeCache());
    const failed = Promise.resolve(editDirectory(lacking, portableHash, top, change));
    await expect(failed).rejects.toBeInstanceOf(RunledgerError);
    await expect(failed).rejects.toMatchObject({
      code: "corrupt",
      message: expect.stringMatching(/missing/),
    });

    const garbled = storedNodes(warm.pending());
    garbled.rows.set(idKey(leafOf1500.id), new Uint8Array([1, 2, 3]));
    const reading = new NodeLoader(garbled.executor, new NodeCache());
    await expect(Promise.resolve(lookup(reading, top, padded(1500)))).rejects.toMatchObject({
      code: "corrupt",
      message: expect.stringMatching(/not well-formed/),
    });
  });
});

describe("node keys", () => {
  it("two ids share a key exactly when their bytes are equal, and other lengths never meet a 32-byte id's key", () => {
    const id = fc.uint8Array({ minLength: 32, maxLength: 32 });
    fc.assert(
      fc.property(id, id, (a, b) => {
        expect(idKey(a)).toHaveLength(16);
        expect(idKey(a) === idKey(b)).toBe(toHex(a) === toHex(b));
        // A one-byte change anywhere changes the key.
        const c = a.slice();
        const at = b[0]! % 32;
        c[at] = c[at]! ^ (1 + (b[1]! % 255));
        expect(idKey(c)).not.toBe(idKey(a));
      }),
      { numRuns: 2000 },
    );
    fc.assert(
      fc.property(
        fc.uint8Array({ maxLength: 64 }).filter((bytes) => bytes.length !== 32),
        (bytes) => {
          expect(idKey(bytes).length % 2).toBe(1);
        },
      ),
    );
  });
});
