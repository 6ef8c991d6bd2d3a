/**
 * Workspace family (docs/file-format.md): content put through `tx.workspace.apply`
 * reads back exactly — as text, bytes, empty files, nested directories and
 * Unicode names, after overwrites and deletes — through read, stream, stat,
 * list and walk; every root id is the one the documented format 1 gives;
 * equal content and unchanged directories are stored once; a 100 MiB file
 * streams in and out one chunk at a time. The other workspace families
 * (paths, faults, history/fork/GC) are registered from here too.
 */
import { createHash, randomFillSync } from "node:crypto";
import { EMPTY_ROOT_ID, type RunLease } from "@runledger/core";
import { CHUNK_SIZE } from "@runledger/core/engine";
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { asyncIterableOf, type Fixtures, failureOf, sameBytes, ViewSlicing } from "../fixtures.js";
import { describeWorkspaceCopies } from "./workspace-copies.js";
import { describeWorkspaceDeltas } from "./workspace-deltas.js";
import { describeWorkspaceDiff } from "./workspace-diff.js";
import { describeWorkspaceFaults } from "./workspace-faults.js";
import {
  apply,
  applyToModel,
  codeOf,
  DOCUMENTED_EMPTY_ROOT,
  dumpTables,
  endsNode,
  expectRefusedUnchanged,
  expectWorkspace,
  INLINE_MAX,
  INLINE_NODE_MAX,
  type Model,
  type NodeEntry,
  newRun,
  nodeEntries,
  objectCounts,
  parseNode,
  query,
  referenceApply,
  referenceDirectoryTreeId,
  referenceRootId,
  rowCounts,
  sha256Hex,
  storedRootBytes,
  storedTables,
  utf8,
} from "./workspace-fixtures.js";
import { describeWorkspaceHistory } from "./workspace-history.js";
import { describeWorkspacePaths } from "./workspace-paths.js";

const MiB = 1024 * 1024;

/** Deterministic bytes that differ from chunk to chunk (so nothing dedupes by accident). */
function patterned(length: number, seed: number): Uint8Array {
  const out = new Uint8Array(length);
  let x = (seed * 2654435761) >>> 0 || 1;
  for (let i = 0; i < length; i++) {
    x ^= x << 13;
    x ^= x >>> 17;
    x ^= x << 5;
    out[i] = x & 0xff;
  }
  return out;
}

function asBytes(content: Uint8Array | string): Uint8Array {
  return typeof content === "string" ? utf8(content) : content;
}

/** Splits bytes into pieces of the given sizes, cycling through them. */
function piecesOf(bytes: Uint8Array, sizes: readonly number[]): Uint8Array[] {
  const pieces: Uint8Array[] = [];
  for (let offset = 0, i = 0; offset < bytes.length; i++) {
    const size = sizes[i % sizes.length]!;
    pieces.push(bytes.slice(offset, offset + size));
    offset += size;
  }
  return pieces;
}

function readableStreamOf(pieces: readonly Uint8Array[]): ReadableStream<Uint8Array> {
  let next = 0;
  return new ReadableStream<Uint8Array>({
    pull(controller) {
      const piece = pieces[next++];
      if (piece === undefined) controller.close();
      else controller.enqueue(piece);
    },
  });
}

const model = (entries: Record<string, Uint8Array | string>): Model =>
  new Map(
    Object.entries(entries).map(([path, content]) => [
      path,
      typeof content === "string" ? utf8(content) : content,
    ]),
  );

const changesOf = (m: Model) => ({ put: Object.fromEntries(m) });

/** The entry the top node of `root` holds for `name`, read straight from the tables. */
async function topEntry(
  lease: RunLease,
  root: string,
  name: string,
): Promise<NodeEntry | undefined> {
  return parseNode(await storedRootBytes(lease, root)).entries.find((e) => e.name === name);
}

/** The tree id that the top tree of `root` names for `name`. */
async function subtreeOf(lease: RunLease, root: string, name: string): Promise<string> {
  return String((await topEntry(lease, root, name))?.target);
}

export function describeWorkspace(fx: Fixtures): void {
  describe("workspace: apply and snapshot reads", () => {
    it("starts every run at the canonical empty root, identical to the documented id", async () => {
      const { lease } = await newRun(fx);
      expect(EMPTY_ROOT_ID).toBe(DOCUMENTED_EMPTY_ROOT);
      expect(referenceRootId(new Map())).toBe(DOCUMENTED_EMPTY_ROOT);
      await expectWorkspace(lease, new Map());
      const history = await lease.read(async (r) => {
        const entries = [];
        for await (const entry of r.workspace.history()) entries.push(entry);
        return entries;
      });
      expect(history).toStrictEqual([]);
    });

    it("round-trips text, bytes and empty files; a file of at most 256 bytes is held in its entry, a larger one is an object", async () => {
      const { lease } = await newRun(fx);
      const allBytes = Uint8Array.from({ length: INLINE_MAX }, (_, i) => i);
      const justOver = Uint8Array.from({ length: INLINE_MAX + 1 }, (_, i) => i % 7);
      const puts = {
        "hello.txt": "héllo, wörld\n",
        "bytes.bin": allBytes,
        "over.bin": justOver,
        "empty.txt": "",
        "empty.bin": new Uint8Array(0),
      };
      const expected = model(puts);
      const result = await apply(lease, { put: puts });
      expect(result).toStrictEqual({ rootId: referenceRootId(expected), sequence: 1 });
      await expectWorkspace(lease, expected);
      // Only the 257-byte file has an object of its own; the rest live in the top node.
      const objects = await query(
        lease,
        "SELECT kind, size, length(data) AS length FROM workspace_object WHERE id IN (?, ?, ?)",
        [
          createHash("sha256").digest(),
          createHash("sha256").update(allBytes).digest(),
          createHash("sha256").update(justOver).digest(),
        ],
      );
      expect(objects).toStrictEqual([{ kind: 0, size: INLINE_MAX + 1, length: INLINE_MAX + 1 }]);
      // Nodes: the empty root the run starts at. The top, small, is held by the apply's event.
      expect(await objectCounts(lease)).toStrictEqual({ nodes: 1, files: 1, chunks: 0 });
      expect(
        await query(lease, "SELECT id FROM workspace_object WHERE id = ?", [
          Buffer.from(result.rootId, "hex"),
        ]),
      ).toStrictEqual([]);
      const top = parseNode(await storedRootBytes(lease, result.rootId));
      expect(top.entries.map((e) => [e.name, e.content?.length])).toStrictEqual([
        ["bytes.bin", INLINE_MAX],
        ["empty.bin", 0],
        ["empty.txt", 0],
        ["hello.txt", utf8("héllo, wörld\n").length],
        ["over.bin", undefined],
      ]);
      // The journal event of the apply records the new root and names the paths.
      const events = await lease.read((r) => r.journal.list());
      expect(events).toHaveLength(1);
      expect(events[0]!.rootId).toBe(result.rootId);
      expect(events[0]!.record).toMatchObject({ kind: "workspace.apply" });
      expect(await lease.verify()).toMatchObject({ ok: true, problems: [] });
    });

    it("round-trips nested directories and refuses reads of the wrong kind", async () => {
      const { lease } = await newRun(fx);
      const expected = model({
        "a/b/c/d.txt": "deep",
        "a/b/e.txt": "e",
        "a/f.txt": "f",
        "a.txt": "a.txt sorts after the directory a",
        "a-b/x": "a-b sorts before a.txt and a",
        "g.txt": "g",
      });
      await apply(lease, changesOf(expected));
      await expectWorkspace(lease, expected);
      await lease.read(async (r) => {
        const under = [];
        for await (const file of r.workspace.walk("a/b")) under.push(file.path);
        expect(under).toStrictEqual(["a/b/c/d.txt", "a/b/e.txt"]);
        const single = [];
        for await (const file of r.workspace.walk("a/f.txt")) single.push(file.path);
        expect(single).toStrictEqual(["a/f.txt"]);
        expect(await codeOf(r.workspace.read("a"))).toBe("not_a_file");
        expect(await codeOf(r.workspace.read("a/b"))).toBe("not_a_file");
        expect(await codeOf(r.workspace.list("g.txt"))).toBe("not_a_directory");
        expect(await codeOf(r.workspace.read("nope"))).toBe("path_not_found");
        expect(await codeOf(r.workspace.stat("a/x/y"))).toBe("path_not_found");
        expect(await codeOf(r.workspace.read("g.txt/inside"))).toBe("path_not_found");
        expect(await codeOf(r.workspace.list("nope"))).toBe("path_not_found");
        expect(await codeOf(r.workspace.walk("nope").next())).toBe("path_not_found");
        expect(await codeOf(r.workspace.stream("a").next())).toBe("not_a_file");
      });
    });

    it("keeps Unicode NFC names exactly, case-sensitive, in UTF-8 byte order", async () => {
      const { lease } = await newRun(fx);
      const expected = model({
        "café/naïve.txt": "nfc",
        "日本語/ファイル.md": "cjk",
        "emoji/😀 grin.txt": "astral",
        "A.txt": "upper",
        "a.txt": "lower",
        "Ω/ω": "greek",
        "z\u00a0c1": "a no-break space (after the C1 controls) is kept",
        " spaced name ": "spaces are kept",
        "...": "three dots is a name",
        ".hidden/.x": "dot files",
      });
      await apply(lease, changesOf(expected));
      await expectWorkspace(lease, expected);
      await lease.read(async (r) => {
        // The decomposed spelling never reaches the composed file.
        expect(await codeOf(r.workspace.read("cafe\u0301/naïve.txt"))).toBe("invalid_path");
        expect(Buffer.from(await r.workspace.read("A.txt")).toString()).toBe("upper");
        expect(Buffer.from(await r.workspace.read("a.txt")).toString()).toBe("lower");
      });
      // The names are stored as their exact UTF-8 bytes.
      const nodes = await query(lease, "SELECT data FROM workspace_object");
      const stored = new Set(
        nodes
          .map((row) => Buffer.from(row.data as Uint8Array))
          .filter((data) => data.subarray(0, 16).toString() === "runledger/node/1")
          .flatMap((data) => nodeEntries(data))
          .map((entry) => Buffer.from(entry.name, "utf8").toString("hex")),
      );
      for (const name of ["café", "naïve.txt", "日本語", "😀 grin.txt", "Ω", "z\u00a0c1"]) {
        expect(stored.has(Buffer.from(name, "utf8").toString("hex")), name).toBe(true);
      }
    });

    it("overwrites a file; the previous root still reads the previous content", async () => {
      const { lease } = await newRun(fx);
      const big = patterned(CHUNK_SIZE * 2 + 17, 1);
      const first = model({ "dir/file": big, other: "stays" });
      const r1 = await apply(lease, changesOf(first));
      const second = applyToModel(first, { "dir/file": utf8("now small") }, []);
      const r2 = await apply(lease, { put: { "dir/file": "now small" } });
      expect(r2.rootId).not.toBe(r1.rootId);
      expect(r2.rootId).toBe(referenceRootId(second));
      await expectWorkspace(lease, second);
      await expectWorkspace(lease, first, r1.rootId);
      const third = applyToModel(second, { "dir/file": big }, []);
      const r3 = await apply(lease, { put: { "dir/file": big } });
      expect(r3.rootId).toBe(r1.rootId);
      await expectWorkspace(lease, third);
    });

    it("deletes a file, a whole directory, and drops directories left empty", async () => {
      const { lease } = await newRun(fx);
      let expected = model({
        "keep.txt": "k",
        "d/one": "1",
        "d/sub/two": "2",
        "d/sub/three": "3",
        "e/only": "only",
        "p/q/r/s": "deep",
        "p/t": "beside",
      });
      await apply(lease, changesOf(expected));
      await expectWorkspace(lease, expected);

      const step = async (deletes: string[], gone: string[]) => {
        expected = applyToModel(expected, {}, deletes);
        const result = await apply(lease, { delete: deletes });
        expect(result.rootId).toBe(referenceRootId(expected));
        await expectWorkspace(lease, expected);
        await lease.read(async (r) => {
          for (const path of gone)
            expect(await codeOf(r.workspace.stat(path)), path).toBe("path_not_found");
        });
      };
      await step(["keep.txt"], ["keep.txt"]);
      await step(["d"], ["d", "d/one", "d/sub", "d/sub/two"]);
      await step(["e/only"], ["e", "e/only"]);
      await step(["p/q/r/s"], ["p/q/r/s", "p/q/r", "p/q"]);
      await step(["p/t"], ["p"]);
      expect(expected.size).toBe(0);
      expect(await lease.read((r) => r.workspace.currentRoot())).toBe(EMPTY_ROOT_ID);
      expect(await lease.verify()).toMatchObject({ ok: true });
    });

    it("records the caller's event, whose root is the new one, and rolls back with the caller", async () => {
      const { lease } = await newRun(fx);
      const result = await lease.transact(async (tx) => {
        await tx.journal.append({ kind: "before" });
        const applied = await tx.workspace.apply(
          { put: { "notes/a.md": "# a" } },
          { event: { kind: "step", n: 1 } },
        );
        const after = await tx.journal.append({ kind: "after" });
        expect(after.rootId).toBe(applied.rootId);
        return applied;
      });
      const events = await lease.read((r) => r.journal.list());
      expect(events.map((e) => [e.sequence, e.record, e.rootId])).toStrictEqual([
        [1, { kind: "before" }, EMPTY_ROOT_ID],
        [2, { kind: "step", n: 1 }, result.rootId],
        [3, { kind: "after" }, result.rootId],
      ]);

      const before = await dumpTables(lease);
      const thrown = new Error("the caller changes its mind");
      await expect(
        lease.transact(async (tx) => {
          await tx.workspace.apply({ put: { "notes/b.md": "# b" } });
          throw thrown;
        }),
      ).rejects.toBe(thrown);
      expect(await dumpTables(lease)).toStrictEqual(before);
    });

    it("takes content as bytes, text, a sync iterable, an async iterable or a ReadableStream", async () => {
      const { lease } = await newRun(fx);
      const bytes = patterned(CHUNK_SIZE + 4099, 2);
      const sizes = [65_537, 1, 4099, CHUNK_SIZE + 1];
      await apply(lease, {
        put: {
          "as/bytes": bytes,
          "as/iterable": piecesOf(bytes, sizes),
          "as/async": asyncIterableOf(piecesOf(bytes, sizes)),
          "as/stream": readableStreamOf(piecesOf(bytes, sizes)),
          "as/empty-stream": readableStreamOf([]),
          "as/text": "text",
        },
      });
      const expected = model({
        "as/bytes": bytes,
        "as/iterable": bytes,
        "as/async": bytes,
        "as/stream": bytes,
        "as/empty-stream": "",
        "as/text": "text",
      });
      await expectWorkspace(lease, expected);
      // One object for the large content, its pieces stored once (the small
      // files are inline); nodes: the empty root (as/ is small enough to be
      // held in its entry, and the top to be held by its event).
      expect(await objectCounts(lease)).toStrictEqual({ nodes: 1, files: 1, chunks: 2 });
    });

    it("keeps a copy of the bytes it was given: changing the caller's array afterwards changes nothing read", async () => {
      const { lease } = await newRun(fx);
      const given = ViewSlicing.from(utf8("the step's first output"));
      const overwritten = ViewSlicing.from(utf8("kept whole"));
      // The first apply builds on a root read; the next ones on the root the last one built.
      await apply(lease, { put: { "state/output.json": overwritten } });
      await apply(lease, { put: { "state/output.json": given, "notes.txt": overwritten } });
      await apply(lease, { put: { "state/extra.json": "{}" } });
      given.fill(0x21);
      overwritten.fill(0x21);
      await expectWorkspace(
        lease,
        model({
          "state/output.json": "the step's first output",
          "notes.txt": "kept whole",
          "state/extra.json": "{}",
        }),
      );
    });

    it("keeps each piece a stream yields before the next: a source that refills one array loses nothing", async () => {
      const { lease } = await newRun(fx);
      const first = patterned(CHUNK_SIZE, 5);
      const second = patterned(CHUNK_SIZE, 6);
      // One array, refilled for each piece, as a reader with a fixed buffer yields them.
      async function* refilled() {
        const buffer = new ViewSlicing(CHUNK_SIZE);
        for (const piece of [first, second]) {
          buffer.set(piece);
          yield buffer;
        }
      }
      await apply(lease, { put: { "large.bin": refilled() } });
      const whole = new Uint8Array(2 * CHUNK_SIZE);
      whole.set(first);
      whole.set(second, CHUNK_SIZE);
      await expectWorkspace(lease, model({ "large.bin": whole }));
    });

    it("refuses a stream that yields something other than bytes, writing nothing", async () => {
      const { lease } = await newRun(fx);
      await apply(lease, { put: { existing: "x" } });
      async function* bad() {
        yield patterned(CHUNK_SIZE + 5, 3);
        yield "text" as unknown as Uint8Array;
      }
      await expectRefusedUnchanged(lease, "invalid_content", () =>
        apply(lease, { put: { fresh: bad() } }),
      );
    });

    it("reads a few-MiB streamed file back whole, byte for byte", async () => {
      const { lease } = await newRun(fx);
      const bytes = patterned(3 * MiB + 5, 4);
      await apply(lease, {
        put: { "big/file.bin": readableStreamOf(piecesOf(bytes, [65_537, 131_071, 3])) },
      });
      await lease.read(async (r) => {
        const back = await r.workspace.read("big/file.bin");
        expect(back.length).toBe(bytes.length);
        expect(sameBytes(back, bytes)).toBe(true);
        expect(await r.workspace.stat("big/file.bin")).toMatchObject({
          size: bytes.length,
          digest: sha256Hex(bytes),
        });
      });
      const list = await query(
        lease,
        "SELECT kind, size, length(data) / 32 AS n FROM workspace_object WHERE id = ?",
        [createHash("sha256").update(bytes).digest()],
      );
      expect(list).toStrictEqual([
        { kind: 1, size: bytes.length, n: Math.ceil(bytes.length / CHUNK_SIZE) },
      ]);
    });

    // Minutes over http; remote-run-api.test.ts in adapter-libsql streams 6 MiB through a server.
    const local = fx.needs("local").because("100 MiB through a server is too slow for the suite");
    const title =
      "streams a 100 MiB file in odd-sized pieces and back, identical, one chunk at a time";
    local.it(
      title,
      async () => {
        const { lease } = await newRun(fx);
        const total = 100 * MiB;
        const sizes = [64 * 1024 + 1, 1, 3 * 1024 + 7, CHUNK_SIZE - 1, CHUNK_SIZE + 1, 999_983];
        const written = createHash("sha256");
        let produced = 0;
        async function* content(): AsyncGenerator<Uint8Array> {
          for (let i = 0; produced < total; i++) {
            const piece = new Uint8Array(Math.min(sizes[i % sizes.length]!, total - produced));
            randomFillSync(piece);
            written.update(piece);
            produced += piece.length;
            yield piece;
          }
        }
        await apply(lease, { put: { "large/100MiB.bin": content() } });
        expect(produced).toBe(total);
        const digest = written.digest("hex");

        const back = await lease.read(async (r) => {
          const stat = await r.workspace.stat("large/100MiB.bin");
          const hash = createHash("sha256");
          let size = 0;
          let largest = 0;
          let pieces = 0;
          for await (const chunk of r.workspace.stream("large/100MiB.bin")) {
            hash.update(chunk);
            size += chunk.length;
            largest = Math.max(largest, chunk.length);
            pieces++;
          }
          return { stat, size, largest, pieces, digest: hash.digest("hex") };
        });
        expect(back.stat).toMatchObject({ kind: "file", size: total, digest });
        expect(back.size).toBe(total);
        expect(back.digest).toBe(digest);
        expect(back.largest).toBeLessThanOrEqual(CHUNK_SIZE);
        expect(back.pieces).toBe(total / CHUNK_SIZE);
        const stored = await query(
          lease,
          "SELECT count(*) AS n, min(length(data)) AS lo, max(length(data)) AS hi FROM workspace_chunk",
        );
        expect(stored).toStrictEqual([{ n: total / CHUNK_SIZE, lo: CHUNK_SIZE, hi: CHUNK_SIZE }]);
      },
      300_000,
    );

    it("reads any root by id; an unknown root is root_not_found, a malformed one invalid_argument", async () => {
      const { lease } = await newRun(fx);
      const r1 = await apply(lease, { put: { x: "1" } });
      await apply(lease, { delete: ["x"] });
      await lease.read(async (r) => {
        expect(Buffer.from(await r.workspace.read("x", { root: r1.rootId })).toString()).toBe("1");
        expect(await codeOf(r.workspace.read("x"))).toBe("path_not_found");
        const unknown = sha256Hex("no such root");
        expect(await codeOf(r.workspace.read("x", { root: unknown }))).toBe("root_not_found");
        expect(await codeOf(r.workspace.list("", { root: unknown }))).toBe("root_not_found");
        expect(await codeOf(r.workspace.stat("x", { root: "ABC" }))).toBe("invalid_argument");
      });
    });

    it("readMany reads many files at one root in the order asked, held, one-row and chunked alike; a path that is no file is refused, naming it", async () => {
      const { lease } = await newRun(fx);
      const big = patterned(CHUNK_SIZE + 10, 7);
      const files: Record<string, Uint8Array | string> = {
        "d/big": big,
        "d/same": "x".repeat(300),
      };
      for (let i = 0; i < 300; i++)
        files[`d/${String(i).padStart(3, "0")}`] = `${i}:${"y".repeat(i * 2)}`;
      const first = await apply(lease, { put: files });
      await apply(lease, { put: { "d/000": "changed" }, delete: ["d/big"] });
      const paths = ["d/299", "d/big", "d/000", "d/same", "d/000", "d/150"];
      await lease.read(async (r) => {
        const at = await r.workspace.readMany(paths, { root: first.rootId });
        for (const [i, path] of paths.entries()) {
          expect(sameBytes(at[i]!, await r.workspace.read(path, { root: first.rootId }))).toBe(
            true,
          );
        }
        // A path named twice reads as two arrays: changing one leaves the other.
        at[2]![0] = 0;
        expect(Buffer.from(at[4]!).toString()).toBe("0:");
        const now = await r.workspace.readMany(["d/000", "d/150"]);
        expect(now.map((bytes) => Buffer.from(bytes).toString())).toStrictEqual([
          "changed",
          `150:${"y".repeat(300)}`,
        ]);
        expect(await r.workspace.readMany([])).toStrictEqual([]);
        const all = Object.keys(files).sort();
        const every = await r.workspace.readMany(all, { root: first.rootId });
        expect(every.map((bytes, i) => sameBytes(bytes, asBytes(files[all[i]!]!)))).not.toContain(
          false,
        );
        expect(await codeOf(r.workspace.readMany(["d/000", "d/big"]))).toBe("path_not_found");
        expect(await codeOf(r.workspace.readMany(["d"]))).toBe("not_a_file");
        expect(await codeOf(r.workspace.readMany(["d/../x"]))).toBe("invalid_path");
        expect(await codeOf(r.workspace.readMany("d/000" as never))).toBe("invalid_argument");
        expect(await codeOf(r.workspace.readMany([], { root: "ABC" }))).toBe("invalid_argument");
        expect(await codeOf(r.workspace.readMany([], { at: 1 } as never))).toBe("invalid_argument");
        const missing = await failureOf(() => r.workspace.readMany(["d/001", "d/nope"]));
        expect(missing.message).toContain("d/nope");
      });
    });

    it("agrees with a reference model over random batches of puts and deletes", async () => {
      const paths = ["a", "b", "a/x", "a/y", "a/y/z", "b/c", "ü", "ü/v", "c/d/e/f"];
      const contents = [
        utf8(""),
        utf8("1"),
        utf8("22"),
        patterned(300, 5),
        patterned(CHUNK_SIZE + 1, 6),
      ];
      const batch = fc.record({
        puts: fc.uniqueArray(fc.tuple(fc.constantFrom(...paths), fc.nat(contents.length - 1)), {
          selector: ([path]) => path,
          maxLength: 4,
        }),
        deletes: fc.array(fc.constantFrom(...paths), { maxLength: 3 }),
      });
      await fc.assert(
        fc.asyncProperty(fc.array(batch, { minLength: 1, maxLength: 6 }), async (batches) => {
          const { lease, store } = await newRun(fx);
          try {
            let current: Model = new Map();
            const roots: [string, Model][] = [];
            for (const { puts, deletes } of batches) {
              const putMap = Object.fromEntries(puts.map(([p, c]) => [p, contents[c]!]));
              const outcome = referenceApply(current, Object.keys(putMap), deletes);
              if (outcome.codes.size > 0) {
                const before = await dumpTables(lease);
                const code = await codeOf(apply(lease, { put: putMap, delete: deletes }));
                expect([...outcome.codes], `${JSON.stringify({ puts, deletes })}`).toContain(code);
                expect(await dumpTables(lease)).toStrictEqual(before);
                continue;
              }
              current = applyToModel(current, putMap, deletes);
              const result = await apply(lease, { put: putMap, delete: deletes });
              expect(result.rootId).toBe(referenceRootId(current));
              roots.push([result.rootId, current]);
            }
            await expectWorkspace(lease, current);
            for (const [root, m] of roots) await expectWorkspace(lease, m, root);
            expect((await lease.verify()).problems).toStrictEqual([]);
          } finally {
            await lease.release();
            await store.close();
          }
        }),
        { numRuns: 25 },
      );
    }, 120_000);
  });

  describe("workspace: deduplication", () => {
    it("stores the same content at two paths in one apply as one file with its pieces once", async () => {
      const { lease } = await newRun(fx);
      const before = await objectCounts(lease);
      const content = patterned(CHUNK_SIZE * 2 + 100, 7);
      await apply(lease, { put: { "one/x": content, "two/y": content } });
      const after = await objectCounts(lease);
      expect(after.files - before.files).toBe(1);
      expect(after.chunks - before.chunks).toBe(3);
      // No node: one/ and two/ are small enough to be held in the top's
      // entries, and the top in the apply's event.
      expect(after.nodes - before.nodes).toBe(0);
    });

    it("stores nothing new for content an earlier apply already stored", async () => {
      const { lease } = await newRun(fx);
      const content = patterned(CHUNK_SIZE + 1, 8);
      await apply(lease, { put: { first: content, text: "same text" } });
      const before = await objectCounts(lease);
      // As bytes, as a stream and as text: the content is known either way.
      await apply(lease, {
        put: {
          "later/bytes": content,
          "later/stream": asyncIterableOf(piecesOf(content, [1000, 7])),
          "later/text": "same text",
        },
      });
      const after = await objectCounts(lease);
      expect(after.files).toBe(before.files);
      expect(after.chunks).toBe(before.chunks);
      // Only a new top, holding later/ in its entry, held by its event.
      expect(after.nodes).toBe(before.nodes);
    });

    it("stores a piece once for every file that shares the bytes up to its end", async () => {
      const { lease } = await newRun(fx);
      const a = patterned(CHUNK_SIZE, 9);
      const b = patterned(CHUNK_SIZE, 10);
      const c = patterned(123, 11);
      const aab = Buffer.concat([a, a, b]);
      const ac = Buffer.concat([a, c]);
      await apply(lease, { put: { aab, ac } });
      // Pieces are addressed by the file's bytes from its start: "a" is shared, "aa" is not "a".
      expect(await objectCounts(lease)).toMatchObject({ files: 2, chunks: 4 });
      await expectWorkspace(lease, model({ aab, ac }));
    });

    it("a file that grows at its end shares every earlier piece with its previous version", async () => {
      const { lease } = await newRun(fx);
      const first = patterned(CHUNK_SIZE * 3 + 10, 12);
      await apply(lease, { put: { "history.log": first } });
      const before = await objectCounts(lease);
      const grown = Buffer.concat([first, patterned(5000, 13)]);
      await apply(lease, { put: { "history.log": grown } });
      const after = await objectCounts(lease);
      // Three full pieces are shared; only the last, longer piece is new.
      expect(after.chunks - before.chunks).toBe(1);
      expect(after.files - before.files).toBe(1);
      await expectWorkspace(lease, model({ "history.log": grown }));
    });

    it("keeps the tree id of every unchanged directory and rewrites only the changed path", async () => {
      const { lease } = await newRun(fx);
      const first = model({
        "left/x": "x",
        "left/deep/y": "y",
        "right/z": "z",
        top: "top",
      });
      const r1 = await apply(lease, changesOf(first));
      const leftBefore = await subtreeOf(lease, r1.rootId, "left");
      expect(leftBefore).toBe(referenceDirectoryTreeId(first, "left"));
      const before = await objectCounts(lease);

      // Larger than INLINE_MAX, so the new content is an object of its own.
      const z2 = "z2".repeat(INLINE_MAX);
      const second = applyToModel(first, { "right/z": utf8(z2) }, []);
      const r2 = await apply(lease, { put: { "right/z": z2 } });
      expect(await subtreeOf(lease, r2.rootId, "left")).toBe(leftBefore);
      expect(await subtreeOf(lease, r2.rootId, "right")).toBe(
        referenceDirectoryTreeId(second, "right"),
      );
      const after = await objectCounts(lease);
      // No new node row: "right" changed but is held in its entry, "left"
      // (holding "left/deep") is the same bytes as before, and the new top is
      // held by its event.
      expect(after.nodes - before.nodes).toBe(0);
      expect(after.files - before.files).toBe(1);
    });

    it("holds a directory whose top node is at most INLINE_NODE_MAX bytes in its parent's entry, and moves it to a row of its own and back as it grows and shrinks", async () => {
      const { lease } = await newRun(fx);
      /** The entry the top names for "small", as stored, and the directory's documented id. */
      const smallEntry = async (m: Model, rootId: string) => {
        const entry = (await topEntry(lease, rootId, "small"))!;
        expect(entry.target).toBe(referenceDirectoryTreeId(m, "small"));
        return entry;
      };
      const big = (tag: string) => tag.repeat(250);
      let m = model({ "small/a": "a" });
      let r = await apply(lease, changesOf(m));
      const held = await smallEntry(m, r.rootId);
      expect(held.content?.length).toBeLessThanOrEqual(INLINE_NODE_MAX);
      expect(sha256Hex(held.content!)).toBe(held.target);
      // No row of its own: the empty root is the only node (the top is held by its event).
      expect((await objectCounts(lease)).nodes).toBe(1);
      await expectWorkspace(lease, m);

      // Two more inline files of 250 bytes: its node outgrows the bound and becomes a row.
      m = applyToModel(m, { "small/b": utf8(big("b")), "small/c": utf8(big("c")) }, []);
      r = await apply(lease, { put: { "small/b": big("b"), "small/c": big("c") } });
      const apart = await smallEntry(m, r.rootId);
      expect(apart.content).toBeUndefined();
      const row = (await storedTables(lease)).objects.get(apart.target);
      expect(row?.size).toBeGreaterThan(INLINE_NODE_MAX);
      // The empty root and small/'s node; each top so far held by its event.
      expect((await objectCounts(lease)).nodes).toBe(2);
      await expectWorkspace(lease, m);

      // Shrunk back, it is held in the entry again: the same bytes, the same id as at first.
      m = applyToModel(m, {}, ["small/b", "small/c"]);
      r = await apply(lease, { delete: ["small/b", "small/c"] });
      expect(await smallEntry(m, r.rootId)).toStrictEqual(held);
      await expectWorkspace(lease, m);
      expect((await lease.verify()).problems).toStrictEqual([]);
    });

    it("stores a held root as a row once a larger top has it as a child, so it outlives the events that held it", async () => {
      const { lease } = await newRun(fx);
      // A leaf that ends where the cut rule ends a node: a directory grown
      // past it keeps that leaf, unchanged, as its first child.
      const last = Array.from({ length: 10_000 }, (_, i) => `m${i}`).find((n) => endsNode(0, n))!;
      expect(endsNode(0, "a")).toBe(false);
      const first = model({ a: "1", [last]: "2" });
      const r1 = await apply(lease, changesOf(first));
      expect((await storedTables(lease)).objects.has(r1.rootId)).toBe(false);
      const grown = applyToModel(
        first,
        Object.fromEntries(["z1", "z2", "z3"].map((name) => [name, utf8(name)])),
        [],
      );
      const r2 = await apply(lease, changesOf(grown));
      const top = parseNode(await storedRootBytes(lease, r2.rootId));
      expect(top.level).toBe(1);
      expect(top.entries[0]?.target).toBe(r1.rootId);
      expect((await storedTables(lease)).objects.has(r1.rootId)).toBe(true);
      // The event that held it pruned and garbage collected: the new root still reads whole.
      await lease.transact((tx) => tx.workspace.prune({ before: r2.sequence }));
      await lease.transact((tx) => tx.workspace.collectGarbage());
      await expectWorkspace(lease, grown);
      expect((await lease.verify()).problems).toStrictEqual([]);
    });

    it("publishes the same root again when an apply changes nothing, and still journals it", async () => {
      const { lease } = await newRun(fx);
      const r1 = await apply(lease, { put: { "a/b": "same" } });
      const before = await rowCounts(lease);
      const r2 = await apply(lease, { put: { "a/b": "same" } });
      expect(r2).toStrictEqual({ rootId: r1.rootId, sequence: r1.sequence + 1 });
      expect(await rowCounts(lease)).toStrictEqual(before);
      await lease.transact((tx) => tx.journal.append({ kind: "note" }));
      const events = await lease.read((r) => r.journal.list());
      expect(events.map((e) => e.rootId)).toStrictEqual([r1.rootId, r1.rootId, r1.rootId]);
      // The small root is held by every event that records it: the one that
      // published it, the apply that changed nothing and the plain append.
      const held = await query(
        lease,
        "SELECT lower(hex(root_id)) AS root, lower(hex(root_node)) AS node FROM journal ORDER BY sequence",
      );
      const node = sha256Hex(Buffer.from(String(held[0]?.node), "hex"));
      expect(node).toBe(r1.rootId);
      expect(held.map((row) => [row.root, row.node])).toStrictEqual(
        Array.from({ length: 3 }, () => [r1.rootId, held[0]?.node]),
      );
    });
  });

  describeWorkspacePaths(fx);
  describeWorkspaceFaults(fx);
  describeWorkspaceHistory(fx);
  describeWorkspaceDeltas(fx);
  describeWorkspaceCopies(fx);
  describeWorkspaceDiff(fx);
}
