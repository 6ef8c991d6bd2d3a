/**
 * RunledgerSaver's options: `{ store, directory }`, `{ store, catalog }` and
 * `{ store, locate }`, what each decides (where the threads live, what lists
 * them), the names `threadNamespace` gives threads on a server, and the
 * refusals of options that cannot work, before anything is written.
 */
import { existsSync, readdirSync } from "node:fs";
import { join } from "node:path";
import { isRunledgerError, RunStore } from "@runledger/core";
import { afterEach, describe, expect, it } from "vitest";
import { RunledgerSaver, threadFileName, threadNamespace } from "../src/index.js";
import { BACKENDS, tempDirectory } from "./support/backends.js";

const CHECKPOINT = {
  v: 4,
  id: "1ef0000-0000-6000-8000-000000000001",
  ts: "2026-12-04T00:00:00.000Z",
  channel_values: { count: 1 },
  channel_versions: { count: 1 },
  versions_seen: {},
};
const METADATA = { source: "input", step: -1, parents: {} } as const;

function refusal(action: () => unknown): { code: string; message: string } {
  try {
    action();
  } catch (error) {
    if (isRunledgerError(error)) return { code: error.code, message: error.message };
    throw error;
  }
  throw new Error("expected a refusal");
}

const cleanups: (() => Promise<void> | void)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

for (const backend of BACKENDS) {
  describe(`RunledgerSaver's options on ${backend.name}`, () => {
    function setUp(catalog?: (dir: string) => string) {
      const directory = tempDirectory();
      const store = new RunStore({
        driver: backend.driver(),
        ...(catalog === undefined ? {} : { catalog: catalog(directory.path) }),
      });
      cleanups.push(directory.remove, () => store.close());
      return { store, path: directory.path };
    }

    it("with { store, catalog } the threads live beside the catalog, and list() without a thread id finds them", async () => {
      const { store, path } = setUp((dir) => join(dir, "threads.catalog"));
      const saver = new RunledgerSaver({ store, catalog: join(path, "threads.catalog") });
      cleanups.push(() => saver.close());
      expect(saver.directory).toBe(path);
      for (const threadId of ["a", "Order 42/β"]) {
        await saver.put({ configurable: { thread_id: threadId } }, CHECKPOINT, METADATA, {
          count: 1,
        });
      }
      expect(
        readdirSync(path)
          .filter((name) => name.endsWith(".db"))
          .sort(),
      ).toStrictEqual([threadFileName("a"), threadFileName("Order 42/β")].sort());
      const threads: string[] = [];
      for await (const tuple of saver.list({})) threads.push(tuple.config.configurable?.thread_id);
      expect(threads.sort()).toStrictEqual(["Order 42/β", "a"]);
    });

    it("with { store, directory } and a store without a catalog, threads are listed one by one and list() across threads is catalog_missing", async () => {
      const { store, path } = setUp();
      const saver = new RunledgerSaver({ store, directory: path });
      cleanups.push(() => saver.close());
      await saver.put({ configurable: { thread_id: "a" } }, CHECKPOINT, METADATA, { count: 1 });
      const one = [];
      for await (const tuple of saver.list({ configurable: { thread_id: "a" } })) one.push(tuple);
      expect(one).toHaveLength(1);
      const across = async () => {
        for await (const _ of saver.list({})) return;
      };
      await expect(across()).rejects.toMatchObject({ code: "catalog_missing" });
    });

    it("a catalog that is not the store's is refused, naming both, and nothing is written", () => {
      const { store, path } = setUp((dir) => join(dir, "threads.catalog"));
      const other = join(path, "other.catalog");
      const wrong = refusal(() => new RunledgerSaver({ store, catalog: other }));
      expect(wrong.code).toBe("invalid_argument");
      expect(wrong.message).toContain("other.catalog");
      expect(wrong.message).toContain("threads.catalog");
      const bare = setUp();
      const none = refusal(() => new RunledgerSaver({ store: bare.store, catalog: other }));
      expect(none.code).toBe("invalid_argument");
      expect(none.message).toContain("has no catalog");
      expect(existsSync(other)).toBe(false);
      expect(readdirSync(path)).toStrictEqual([]);
    });

    it("refuses options of the wrong type and unknown option names", () => {
      const { store } = setUp();
      for (const options of [
        { store, catalog: "" },
        { store, catalog: 7 },
        { store, directory: 7 },
        { store, locate: "threads/" },
        { store, locate: (id: string) => id, directory: "threads" },
        { store, catalogue: "x" },
        { store: {} },
      ]) {
        expect(refusal(() => new RunledgerSaver(options as never)).code).toBe("invalid_argument");
      }
    });

    it("with { store, locate } each thread's run is where locate says, and a locate that gives no location is refused before anything is written", async () => {
      const { store, path } = setUp();
      const saver = new RunledgerSaver({ store, locate: (id) => join(path, `thread-${id}.run`) });
      cleanups.push(() => saver.close());
      await saver.put({ configurable: { thread_id: "a" } }, CHECKPOINT, METADATA, { count: 1 });
      expect(saver.location("a")).toBe(join(path, "thread-a.run"));
      expect(existsSync(join(path, "thread-a.run"))).toBe(true);
      expect(existsSync(join(path, threadFileName("a")))).toBe(false);
      const tuple = await saver.getTuple({ configurable: { thread_id: "a" } });
      expect(tuple?.checkpoint.channel_values).toStrictEqual({ count: 1 });

      const nowhere = new RunledgerSaver({ store, locate: () => "" });
      cleanups.push(() => nowhere.close());
      await expect(
        nowhere.put({ configurable: { thread_id: "b" } }, CHECKPOINT, METADATA, { count: 1 }),
      ).rejects.toMatchObject({
        code: "invalid_argument",
        message: expect.stringMatching(/locate/),
      });
      expect(readdirSync(path).filter((name) => name.endsWith(".run"))).toStrictEqual([
        "thread-a.run",
      ]);
    });
  });
}

describe("threadNamespace: a thread's database name on a libSQL server", () => {
  const LABEL = /^[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?$/;
  const ids = [
    "a",
    "order-42",
    "Order-42",
    "order--42",
    "order_42",
    "-order",
    "Order 42/β",
    "β",
    "",
    "x".repeat(40),
    "x".repeat(41),
    "x".repeat(10_000),
    "1f1f0c7b-88be-64d0-8003-9319c8a481a3",
  ];

  it("keeps an id that is a host label already (at most 40 characters, no --) as it is", () => {
    for (const id of ["a", "order-42", "x".repeat(40), "1f1f0c7b-88be-64d0-8003-9319c8a481a3"]) {
      expect(threadNamespace(id)).toBe(id);
    }
  });

  it("gives every other id a host label of its own: a readable part, --, and a digest of the id", () => {
    const names = ids.map((id) => threadNamespace(id));
    for (const name of names) {
      expect(name).toMatch(LABEL);
      expect(name.length).toBeLessThanOrEqual(63);
    }
    expect(new Set(names).size).toBe(ids.length);
    expect(threadNamespace("Order 42/β")).toMatch(/^order-42--[0-9a-f]{16}$/);
    expect(threadNamespace("β")).toMatch(/^t--[0-9a-f]{16}$/);
    expect(ids.map((id) => threadNamespace(id))).toStrictEqual(names);
  });
});
