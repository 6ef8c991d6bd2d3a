import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { toHex } from "../src/port/hash.js";
import { applyDelta, baseFor, encodeDelta } from "../src/workspace/delta.js";
import { compareNames, encodeNode, type Item } from "../src/workspace/node.js";

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
});
