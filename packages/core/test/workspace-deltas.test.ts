import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { toHex } from "../src/port/bytes.js";
import type { Executor } from "../src/port/driver.js";
import { applyDelta, baseFor, encodeDelta } from "../src/workspace/delta.js";
import { idKey } from "../src/workspace/id-key.js";
import { compareNames, type DirectoryNode, type Item } from "../src/workspace/node.js";
import { readNodeBytes } from "../src/workspace/node-bytes.js";
import { encodeNode } from "../src/workspace/node-encoding.js";
import { BYTES, DELTA } from "../src/workspace/object-rows.js";
import { RebuiltNodes } from "../src/workspace/rebuilt-nodes.js";

const item = fc.record({
  name: fc.string({ minLength: 1, maxLength: 12 }).filter((name) => !name.includes("\u0000")),
  inline: fc.boolean(),
  seed: fc.integer({ min: 0, max: 255 }),
});

/** A leaf from generated entries: names made unique and put in order. */
function leaf(entries: { name: string; inline: boolean; seed: number }[]): Item[] {
  const byName = new Map(entries.map((entry) => [entry.name, entry]));
  return [...byName.values()]
    .sort((a, b) => compareNames(a.name, b.name))
    .map(({ name, inline, seed }) => {
      const target = new Uint8Array(32).fill(seed);
      return inline
        ? { name, kind: "file", target, size: 3, content: new Uint8Array([seed, 1, 2]) }
        : { name, kind: "file", target, size: 1000 + seed };
    });
}

describe("nodes stored as deltas", () => {
  it("a delta rebuilds exactly the new node's bytes from the base's, or is not proposed when it would exceed half the node", () => {
    let proposed = 0;
    fc.assert(
      fc.property(
        fc.array(item, { maxLength: 30 }),
        fc.array(item, { maxLength: 6 }),
        fc.array(fc.nat(), { maxLength: 6 }),
        (old, added, dropped) => {
          const baseItems = leaf(old);
          const kept = baseItems.filter((_, i) => !dropped.includes(i));
          const newItems = leaf([
            ...kept.map((entry) => ({
              name: entry.name,
              inline: entry.content !== undefined,
              seed: entry.target[0]!,
            })),
            ...added,
          ]);
          const base = encodeNode(0, baseItems);
          const node = encodeNode(0, newItems);
          const delta = encodeDelta(base, node);
          if (delta === undefined) return;
          proposed++;
          expect(toHex(delta.subarray(0, 32))).toBe(toHex(base.id));
          expect(2 * delta.length).toBeLessThanOrEqual(node.bytes!.length);
          expect(toHex(applyDelta(base.bytes!, delta, node.bytes!.length)!)).toBe(
            toHex(node.bytes!),
          );
        },
      ),
    );
    expect(proposed).toBeGreaterThan(10); // the property held over real deltas, not only refusals
  });

  it("a node that changed one entry of many is stored in a small fraction of its size", () => {
    const names = Array.from({ length: 20 }, (_, i) => ({ name: `m${i}`, inline: false, seed: i }));
    const base = encodeNode(0, leaf(names));
    const node = encodeNode(0, leaf([...names, { name: "m5", inline: false, seed: 99 }]));
    const delta = encodeDelta(base, node)!;
    expect(delta.length).toBeLessThan(node.bytes!.length / 5);
    expect(toHex(applyDelta(base.bytes!, delta, node.bytes!.length)!)).toBe(toHex(node.bytes!));
  });

  it("a delta that is cut short, reaches past its base or rebuilds another size is refused", () => {
    const names = Array.from({ length: 20 }, (_, i) => ({ name: `m${i}`, inline: false, seed: i }));
    const base = encodeNode(0, leaf(names));
    const node = encodeNode(0, leaf([...names, { name: "m50", inline: false, seed: 7 }]));
    const delta = encodeDelta(base, node)!;
    const size = node.bytes!.length;
    expect(applyDelta(base.bytes!, delta.subarray(0, delta.length - 1), size)).toBeUndefined();
    expect(applyDelta(base.bytes!.subarray(0, 40), delta, size)).toBeUndefined();
    expect(applyDelta(base.bytes!, delta, size + 1)).toBeUndefined();
    expect(applyDelta(base.bytes!, delta, size - 1)).toBeUndefined();
    expect(applyDelta(base.bytes!, delta.subarray(0, 32), 0)).toBeUndefined();
  });

  it("a new node's base is the replaced node whose range holds its first name", () => {
    const nodes = [["a", "b"], ["k", "m"], ["t"]].map((names) =>
      encodeNode(0, leaf(names.map((name, seed) => ({ name, inline: false, seed })))),
    );
    const first = (name: string) => baseFor(nodes, leaf([{ name, inline: false, seed: 1 }]));
    expect(first("l")).toBe(nodes[1]);
    expect(first("k")).toBe(nodes[1]);
    expect(first("0")).toBe(nodes[0]); // before every range: the first
    expect(first("z")).toBe(nodes[2]);
    expect(baseFor(nodes, [])).toBeUndefined();
  });

  describe("reading a chain through nodes already rebuilt", () => {
    /** v0 whole, then v1 … v5 each one more file, each a delta onto the one before (depth = index). */
    function chain() {
      const names = Array.from({ length: 20 }, (_, i) => ({
        name: `m${i}`,
        inline: false,
        seed: i,
      }));
      const versions: DirectoryNode[] = [];
      for (let v = 0; v <= 5; v++) {
        versions.push(
          encodeNode(
            0,
            leaf([
              ...names,
              ...Array.from({ length: v }, (_, k) => ({ name: `n${k}`, inline: false, seed: k })),
            ]),
          ),
        );
      }
      const rows = new Map<
        string,
        { kind: number; size: number; depth: number; data: Uint8Array }
      >();
      versions.forEach((node, v) => {
        const bytes = node.bytes!;
        rows.set(
          idKey(node.id),
          v === 0
            ? { kind: BYTES, size: bytes.length, depth: 0, data: bytes }
            : {
                kind: DELTA,
                size: bytes.length,
                depth: v,
                data: encodeDelta(versions[v - 1]!, node)!,
              },
        );
      });
      const reads: string[] = [];
      const executor: Executor = {
        execute: async (_sql, params) => {
          // A lookup by id binds the id's key-index prefix, then the id (workspace/object-key.ts).
          const key = idKey(params!.at(-1) as Uint8Array);
          reads.push(key);
          const row = rows.get(key);
          return {
            rows: row === undefined ? [] : [{ ...row }],
            changes: 0,
            lastInsertRowid: undefined,
          };
        },
      };
      return { versions, rows, reads, executor };
    }

    it("gives the bytes a fresh read gives, reading only the rows above the nearest rebuilt node", async () => {
      const { versions, reads, executor } = chain();
      const rebuilt = new RebuiltNodes();
      const first = await readNodeBytes(executor, versions[4]!.id, rebuilt);
      expect(toHex(first.bytes!)).toBe(toHex(versions[4]!.bytes!));
      expect(reads).toHaveLength(5); // v4 down to the whole v0
      reads.length = 0;
      const next = await readNodeBytes(executor, versions[5]!.id, rebuilt);
      expect(toHex(next.bytes!)).toBe(toHex(versions[5]!.bytes!));
      expect(reads).toEqual([idKey(versions[5]!.id)]); // v4 was rebuilt already
      reads.length = 0;
      const fresh = await readNodeBytes(executor, versions[5]!.id);
      expect(toHex(fresh.bytes!)).toBe(toHex(next.bytes!));
      expect(reads).toHaveLength(6);
    });

    it("refuses a delta as deep as its rebuilt base, as a fresh read does", async () => {
      const { versions, rows, executor } = chain();
      rows.get(idKey(versions[5]!.id))!.depth = 4; // v4, its base, is 4 deep too: the chain does not descend
      const rebuilt = new RebuiltNodes();
      await readNodeBytes(executor, versions[4]!.id, rebuilt);
      const damage = "a delta chain is not well-formed";
      expect((await readNodeBytes(executor, versions[5]!.id, rebuilt)).damage).toBe(damage);
      expect((await readNodeBytes(executor, versions[5]!.id)).damage).toBe(damage);
    });

    it("keeps at most its limit, oldest out first", () => {
      const rebuilt = new RebuiltNodes(2);
      const ids = [1, 2, 3].map((n) => new Uint8Array(32).fill(n));
      for (const id of ids) rebuilt.set(id, id, 0);
      expect(rebuilt.get(ids[0]!)).toBeUndefined();
      expect(rebuilt.get(ids[1]!)?.bytes).toBe(ids[1]);
      expect(rebuilt.get(ids[2]!)?.bytes).toBe(ids[2]);
    });
  });
});
