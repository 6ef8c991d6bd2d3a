/**
 * The node cache keeps the nodes read or written most recently: past its
 * limit, the one used longest ago goes first. Reading the node used last
 * moves nothing (a step reads the root the step before it kept), so these
 * pin that the order stays exact around it.
 */
import { describe, expect, it } from "vitest";
import { idKey } from "../src/workspace/id-key.js";
import type { DirectoryNode } from "../src/workspace/node.js";
import { NodeCache } from "../src/workspace/node-cache.js";

const node = (n: number, base?: DirectoryNode): DirectoryNode => ({
  id: new Uint8Array(32).fill(n),
  level: 0,
  items: [],
  ...(base === undefined ? {} : { base }),
});

/** A cache of `limit` nodes, holding one node at each of `keys`, set in that order. */
const filled = (limit: number, keys: readonly string[]) => {
  const cache = new NodeCache(limit);
  for (const key of keys) cache.set(key, node(1));
  return cache;
};

describe("the node cache drops the node used longest ago first", () => {
  it("a node read moves after the others; reading the newest again moves nothing", () => {
    const cache = filled(3, ["a", "b", "c"]);
    expect(cache.get("c")).toBeDefined();
    expect(cache.get("a")).toBeDefined();
    cache.set("d", node(2));
    expect(cache.get("b"), "b was used longest ago").toBeUndefined();
    // c was read before a: the next node set past the limit drops c.
    cache.set("e", node(3));
    expect(cache.get("c")).toBeUndefined();
  });

  it("a node read after another was read is the newest: it is the last to go", () => {
    const cache = filled(3, ["a", "b", "c"]);
    expect(cache.get("a")).toBeDefined();
    expect(cache.get("c")).toBeDefined();
    cache.set("d", node(2));
    cache.set("e", node(3));
    // b went first, then a (read before c): c, read last, stays.
    expect(cache.get("a")).toBeUndefined();
    expect(cache.get("c")).toBeDefined();
  });

  it("a node set after a read is the newest, not the node read", () => {
    const cache = filled(2, ["a"]);
    expect(cache.get("a")).toBeDefined();
    cache.set("b", node(2));
    expect(cache.get("a")).toBeDefined();
    cache.set("c", node(3));
    expect(cache.get("b"), "b was used longest ago").toBeUndefined();
    expect(cache.get("a")).toBeDefined();
  });

  it("replace lets go of the node an edit replaced and keeps the new one as the newest", () => {
    const cache = new NodeCache(2);
    const first = node(1);
    const second = node(2);
    cache.set(idKey(first.id), first);
    cache.set(idKey(second.id), second);
    const third = node(3, second);
    cache.replace([third]);
    expect(cache.get(idKey(second.id))).toBeUndefined();
    expect(cache.get(idKey(third.id))?.base, "kept without its base").toBeUndefined();
    expect(cache.get(idKey(first.id))).toBeDefined();
    cache.set(idKey(node(4).id), node(4));
    // first was read after third: third goes.
    expect(cache.get(idKey(third.id))).toBeUndefined();
    expect(cache.get(idKey(first.id))).toBeDefined();
  });
});
