/**
 * Listing by prefix is exact for every Unicode key (issue 16): the
 * datastore's `list(directory)`, `documents()` and `syncChanges()` select a
 * path range in SQLite's byte order, and every delete-by-prefix (run
 * delete, snapshot collection, supersede) works from `list`. A key whose next
 * character is U+FFFF or lies outside the Basic Multilingual Plane must be
 * listed, and so deleted, like any other. Property-tested with fast-check
 * over arbitrary text, with astral characters and U+FFFF weighted in.
 */
import { type Datastore, WorkflowRunRepository } from "@runledger/core/datastore";
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import type { Fixtures } from "../fixtures.js";
import { datastoreStore } from "./routing-fixtures.js";

/** UTF-8 byte order: how SQLite's BINARY collation orders TEXT. */
function byteOrder(a: string, b: string): number {
  return Buffer.compare(Buffer.from(a, "utf8"), Buffer.from(b, "utf8"));
}

/** One character: any scalar value, with the ones an upper bound of "\uffff" gets wrong weighted in. */
const character = fc.oneof(
  { arbitrary: fc.constantFrom("\uffff", "\u{10000}", "😀", "\u{10ffff}", "\ufffe"), weight: 3 },
  { arbitrary: fc.constantFrom("a", "b", "/", ".", "-", "\u0001", "é", "€"), weight: 3 },
  {
    arbitrary: fc
      .integer({ min: 1, max: 0x10ffff })
      .filter((point) => point < 0xd800 || point > 0xdfff)
      .map((point) => String.fromCodePoint(point)),
    weight: 4,
  },
);
const text = (minLength: number, maxLength: number) =>
  fc.array(character, { minLength, maxLength }).map((chars) => chars.join(""));

const bytes = (text: string) => new TextEncoder().encode(text);

export function describePrefixListing(fx: Fixtures): void {
  describe("prefix listing", () => {
    it("lists exactly the paths under a directory, whatever characters follow it", async () => {
      const store = datastoreStore(fx);
      const location = fx.location();
      const datastore = await store.open(location, { create: true });
      const neighbour = await store.open(location, { namespace: "ns" });
      const namespaced = await store.open(location, { namespace: "n" });
      try {
        await fc.assert(
          fc.asyncProperty(
            text(1, 4),
            fc.uniqueArray(text(0, 4), { maxLength: 6 }),
            fc.uniqueArray(text(1, 8), { maxLength: 6 }),
            async (directory, keys, others) => {
              const inside = keys.map((key) => `${directory}/${key}`);
              // Paths beside the directory, and others that merely share characters with it.
              const outside = [
                ...others,
                directory,
                `${directory}\uffff`,
                `${directory}😀`,
                `${directory}.`,
              ].filter((path) => !path.startsWith(`${directory}/`) && !inside.includes(path));
              const all = [...new Set([...inside, ...outside])];
              await datastore.write("prefix.put", async (w) => {
                for (const path of all) await w.put(path, bytes(path));
              });
              await namespaced.write("prefix.put", async (w) => {
                for (const path of all) await w.put(path, bytes(path));
              });
              await neighbour.write("prefix.put", (w) => w.put("x", bytes("x")).then(() => {}));
              // Every path as stored: the namespace's handle writes "n/" before its own.
              const stored = new Set([...all, ...all.map((path) => `n/${path}`), "ns/x"]);
              const under = (prefix: string) =>
                [...stored]
                  .filter((path) => path.startsWith(prefix))
                  .map((path) => path.slice(prefix.length))
                  .sort(byteOrder);
              try {
                expect(await datastore.read("prefix.list", (r) => r.list(directory))).toEqual(
                  under(`${directory}/`).map((key) => `${directory}/${key}`),
                );
                expect(await namespaced.read("prefix.list", (r) => r.list(directory))).toEqual(
                  under(`n/${directory}/`).map((key) => `${directory}/${key}`),
                );
                // A namespace's documents are exactly its own: not "ns/…", whatever its paths hold.
                const own = (await namespaced.documents()).map((d) => d.path);
                expect(own).toEqual(under("n/"));
                expect(own).toEqual(expect.arrayContaining(all));
              } finally {
                await clear(datastore);
              }
            },
          ),
          { numRuns: 40 },
        );
      } finally {
        await Promise.all([datastore, neighbour, namespaced].map((d) => d.release()));
      }
    });

    it("deletes and collects every snapshot of a run, astral and U+FFFF ids included", async () => {
      const store = datastoreStore(fx);
      const datastore = await store.open(fx.location(), { create: true });
      const runs = new WorkflowRunRepository(datastore);
      const ids = ["a", "z", "\uffff", "😀", "\u{10ffff}", "\u{10000}x", "日本"];
      try {
        let n = 0;
        for (const [action, check] of [
          [
            "delete",
            async (run: { workflowId: string; runId: string }) => {
              expect(await runs.delete(run)).toBe(ids.length + 1);
            },
          ],
          [
            "collect",
            async (run: { workflowId: string; runId: string }) => {
              expect(await runs.collectSnapshots(run, { keep: 0 })).toBe(ids.length);
              await runs.delete(run);
            },
          ],
          [
            "supersede",
            async (run: { workflowId: string; runId: string }) => {
              expect(await runs.supersedeSnapshots(run, "b", "{}")).toBe(ids.length);
              await runs.delete(run);
            },
          ],
        ] as const) {
          // The run id itself ends in an astral character: its partition is a prefix of nothing else's.
          const run = { workflowId: "wf", runId: `r${++n}😀` };
          await runs.create(run, { action });
          for (const id of ids) await runs.saveSnapshot(run, id, JSON.stringify({ id }));
          await check(run);
          expect(await datastore.documents(), action).toEqual([]);
        }
      } finally {
        await datastore.release();
      }
    });
  });
}

async function clear(datastore: Datastore): Promise<void> {
  const paths = (await datastore.documents()).map((d) => d.path);
  await datastore.write("prefix.clear", async (w) => {
    for (const path of paths) await w.delete(path);
  });
}
