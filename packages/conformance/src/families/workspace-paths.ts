/**
 * Workspace path family (docs/file-format.md "Paths"): the one path
 * rule, checked before anything is written. A fixed list of bad paths is
 * refused with `invalid_path` by every writer and reader and leaves every
 * table as it was; a property test over random strings checks that a path is
 * accepted exactly when an independent predicate written here from the
 * documented rule says it is valid, and that accepted paths round-trip
 * exactly. Conflicting changes (a file where a directory is and the reverse,
 * one path named twice) are refused with `path_conflict`, nothing written.
 */
import { EMPTY_ROOT_ID, type RunLease } from "@runledger/core";
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import type { Fixtures } from "../fixtures.js";
import {
  apply,
  codeOf,
  comparePaths,
  count,
  dumpTables,
  expectRefusedUnchanged,
  newRun,
  sha256Hex,
  utf8,
} from "./workspace-fixtures.js";

const MAX_PATH_BYTES = 1024;
const MAX_SEGMENT_BYTES = 255;
const MAX_SEGMENTS = 64;

const byteLength = (text: string) => Buffer.byteLength(text, "utf8");

/** True when every UTF-16 surrogate is half of a pair (the string has a UTF-8 form). */
function wellFormed(text: string): boolean {
  for (let i = 0; i < text.length; i++) {
    const unit = text.charCodeAt(i);
    if (unit >= 0xd800 && unit <= 0xdbff) {
      const next = text.charCodeAt(i + 1);
      if (!(next >= 0xdc00 && next <= 0xdfff)) return false;
      i++;
    } else if (unit >= 0xdc00 && unit <= 0xdfff) {
      return false;
    }
  }
  return true;
}

/** The documented path rule, written independently of core. */
export function referencePathIsValid(path: string): boolean {
  if (path.length === 0 || !wellFormed(path)) return false;
  for (const character of path) {
    const code = character.codePointAt(0)!;
    if (code <= 0x1f || (code >= 0x7f && code <= 0x9f) || character === "\\") return false;
  }
  if (path.normalize("NFC") !== path) return false;
  if (byteLength(path) > MAX_PATH_BYTES) return false;
  const segments = path.split("/");
  if (segments.length > MAX_SEGMENTS) return false;
  return segments.every(
    (segment) =>
      segment !== "" &&
      segment !== "." &&
      segment !== ".." &&
      byteLength(segment) <= MAX_SEGMENT_BYTES,
  );
}

/** Segments of 255, 255, 255, 254 and `last` bytes: 1023 + `last` bytes in all. */
const longPath = (last: number) =>
  ["a".repeat(255), "b".repeat(255), "c".repeat(255), "d".repeat(254), "e".repeat(last)].join("/");

const INVALID: readonly [label: string, path: string][] = [
  ["empty", ""],
  ["absolute", "/etc/passwd"],
  ["only a slash", "/"],
  ["trailing slash", "dir/"],
  ["empty segment", "a//b"],
  ["dot-dot segment", "a/../b"],
  ["leading dot-dot", "../a"],
  ["dot-dot alone", ".."],
  ["dot segment", "a/./b"],
  ["dot alone", "."],
  ["NUL", "a\u0000b"],
  ["control character U+0001", "a\u0001"],
  ["tab", "a\tb"],
  ["newline", "a\nb"],
  ["control character U+001F", "\u001fa"],
  ["C1 control character U+0085", "a\u0085b"],
  ["DEL", "a\u007f"],
  ["backslash", "a\\b"],
  ["non-NFC (decomposed é)", "cafe\u0301"],
  ["non-NFC (Ångström sign)", "\u212b"],
  ["non-NFC (Hangul jamo)", "\u1100\u1161"],
  ["lone high surrogate", "a\ud800b"],
  ["lone low surrogate", "\udc00"],
  ["256-byte segment", "x".repeat(256)],
  ["86 three-byte characters (258 bytes)", "€".repeat(86)],
  ["1025-byte path", longPath(2)],
  ["65 segments", Array.from({ length: 65 }, () => "d").join("/")],
];

const BOUNDARY_VALID: readonly [label: string, path: string][] = [
  ["255-byte segment", "y".repeat(255)],
  ["85 three-byte characters (255 bytes)", "€".repeat(85)],
  ["1024-byte path", longPath(1)],
  ["64 segments", Array.from({ length: 64 }, () => "g").join("/")],
  ["astral characters", "😀/🎉"],
  ["dots inside names", "...x/.y/z.."],
];

/** The paths a refused change must not have written anything for. */
async function expectInvalidEverywhere(lease: RunLease, path: string): Promise<void> {
  // Alone, beside a valid new path with new content, and as a delete.
  await expectRefusedUnchanged(lease, "invalid_path", () =>
    apply(lease, { put: { [path]: "content" } }),
  );
  await expectRefusedUnchanged(lease, "invalid_path", () =>
    apply(lease, { put: { "valid/new.txt": "never written", [path]: utf8("new bytes") } }),
  );
  await expectRefusedUnchanged(lease, "invalid_path", () =>
    apply(lease, { delete: ["existing.txt", path] }),
  );
  await lease.read(async (r) => {
    expect(await codeOf(r.workspace.read(path)), "read").toBe("invalid_path");
    expect(await codeOf(r.workspace.stat(path)), "stat").toBe("invalid_path");
    expect(await codeOf(r.workspace.stream(path).next()), "stream").toBe("invalid_path");
    if (path !== "") {
      // "" names the top for list and walk.
      expect(await codeOf(r.workspace.list(path)), "list").toBe("invalid_path");
      expect(await codeOf(r.workspace.walk(path).next()), "walk").toBe("invalid_path");
    }
  });
}

export function describeWorkspacePaths(fx: Fixtures): void {
  describe("workspace: paths", () => {
    it("has a fixed list of invalid paths that the reference predicate refuses too", () => {
      for (const [label, path] of INVALID) expect(referencePathIsValid(path), label).toBe(false);
      for (const [label, path] of BOUNDARY_VALID)
        expect(referencePathIsValid(path), label).toBe(true);
      expect(byteLength(longPath(1))).toBe(1024);
      expect(byteLength(longPath(2))).toBe(1025);
    });

    for (const [label, path] of INVALID) {
      it(`refuses ${label} with invalid_path in every writer and reader, writing nothing`, async () => {
        const { lease } = await newRun(fx);
        await apply(lease, { put: { "existing.txt": "existing" } });
        await expectInvalidEverywhere(lease, path);
      });
    }

    it("refuses a path that is not a string", async () => {
      const { lease } = await newRun(fx);
      await apply(lease, { put: { "existing.txt": "existing" } });
      for (const path of [42, null, undefined, { toString: () => "existing.txt" }]) {
        await expectRefusedUnchanged(lease, "invalid_path", () =>
          apply(lease, { delete: [path as unknown as string] }),
        );
        expect(await codeOf(lease.read((r) => r.workspace.read(path as unknown as string)))).toBe(
          "invalid_path",
        );
      }
    });

    it("accepts paths at every limit and round-trips them exactly", async () => {
      const { lease } = await newRun(fx);
      for (const [, path] of BOUNDARY_VALID) expect(byteLength(path)).toBeLessThanOrEqual(1024);
      const put = Object.fromEntries(BOUNDARY_VALID.map(([label, path]) => [path, label]));
      await apply(lease, { put });
      await lease.read(async (r) => {
        const walked = [];
        for await (const file of r.workspace.walk()) walked.push(file.path);
        expect(walked.sort()).toStrictEqual(BOUNDARY_VALID.map(([, path]) => path).sort());
        for (const [label, path] of BOUNDARY_VALID) {
          expect(Buffer.from(await r.workspace.read(path)).toString(), label).toBe(label);
          expect((await r.workspace.stat(path)).path, label).toBe(path);
        }
      });
      expect((await lease.verify()).problems).toStrictEqual([]);
    });

    it("accepts a path exactly when the reference predicate does; accepted paths round-trip", async () => {
      const { lease } = await newRun(fx);
      const unit = fc.oneof(
        { arbitrary: fc.constantFrom("a", "b", "Z", "0", "-", "_", " ", "~", ":"), weight: 8 },
        { arbitrary: fc.constant("/"), weight: 4 },
        { arbitrary: fc.constant("."), weight: 3 },
        {
          arbitrary: fc.constantFrom(
            "\\",
            "\u0000",
            "\u0001",
            "\t",
            "\n",
            "\u001f",
            "\u007f",
            "\u0085",
            "\u009f",
          ),
          weight: 1,
        },
        { arbitrary: fc.constantFrom("\u0080", "\u009f", "\u00a0", "\u200b", "\ufeff"), weight: 1 },
        {
          arbitrary: fc.constantFrom(
            "é",
            "e",
            "\u0301",
            "\u212b",
            "Å",
            "ﬁ",
            "한",
            "\u1100",
            "\u1161",
          ),
          weight: 2,
        },
        { arbitrary: fc.constantFrom("😀", "\ud83d", "\ude00", "€", "日"), weight: 2 },
        { arbitrary: fc.string({ unit: "binary", minLength: 1, maxLength: 2 }), weight: 2 },
      );
      const shortPaths = fc.string({ unit, maxLength: 24 });
      const segment = fc
        .tuple(
          fc.constantFrom("a", "€", "😀"),
          fc.oneof(
            fc.integer({ min: 0, max: 4 }),
            fc.constantFrom(63, 64, 85, 86, 127, 128, 255, 256),
          ),
        )
        .map(([c, n]) => c.repeat(n));
      const longPaths = fc.array(segment, { minLength: 1, maxLength: 8 }).map((s) => s.join("/"));
      const deepPaths = fc
        .integer({ min: 60, max: 68 })
        .map((n) =>
          Array.from({ length: n }, (_, i) => String.fromCharCode(97 + (i % 26))).join("/"),
        );
      let accepted = 0;
      let refused = 0;
      const contentOf = (path: string) => utf8(`content of ${JSON.stringify(path)}`);
      await fc.assert(
        fc.asyncProperty(
          fc.uniqueArray(fc.oneof({ arbitrary: shortPaths, weight: 6 }, longPaths, deepPaths), {
            minLength: 1,
            maxLength: 8,
          }),
          async (paths) => {
            // Leave the workspace empty even after an earlier sample failed half way.
            const leftover = await lease.read((r) => r.workspace.list());
            if (leftover.length > 0) await apply(lease, { delete: leftover.map((e) => e.path) });

            const invalid = paths.filter((path) => !referencePathIsValid(path));
            refused += invalid.length;
            if (invalid.length > 0) {
              // Every refusal in one transaction, which each leaves usable; nothing is written.
              const before = await dumpTables(lease);
              await lease.transact(async (tx) => {
                for (const path of invalid) {
                  const label = JSON.stringify(path);
                  const put = tx.workspace.apply({ put: { [path]: contentOf(path) } });
                  expect(await codeOf(put), label).toBe("invalid_path");
                  const del = tx.workspace.apply({ delete: [path] });
                  expect(await codeOf(del), label).toBe("invalid_path");
                  expect(await codeOf(tx.workspace.read(path)), label).toBe("invalid_path");
                  expect(await codeOf(tx.workspace.stat(path)), label).toBe("invalid_path");
                }
              });
              expect(await dumpTables(lease)).toStrictEqual(before);
            }

            // Accepted paths, leaving out one of any two where one lies inside the other.
            const valid: string[] = [];
            for (const path of paths.filter(referencePathIsValid)) {
              const clash = (other: string) =>
                path.startsWith(`${other}/`) || other.startsWith(`${path}/`);
              if (!valid.some(clash)) valid.push(path);
            }
            accepted += valid.length;
            if (valid.length === 0) return;
            const events = await count(lease, "journal");
            await lease.transact(async (tx) => {
              for (const path of valid) {
                await tx.workspace.apply({ put: { [path]: contentOf(path) } });
              }
            });
            expect(await count(lease, "journal")).toBe(events + valid.length);
            await lease.read(async (r) => {
              for (const path of valid) {
                const content = contentOf(path);
                const back = await r.workspace.read(path);
                expect(Buffer.from(back).equals(Buffer.from(content)), path).toBe(true);
                expect(await r.workspace.stat(path)).toMatchObject({
                  path,
                  kind: "file",
                  size: content.length,
                  digest: sha256Hex(content),
                });
                const segments = path.split("/");
                const listed = await r.workspace.list(segments.slice(0, -1).join("/"));
                expect(listed.map((e) => e.name)).toContain(segments[segments.length - 1]);
              }
              const walked = [];
              for await (const file of r.workspace.walk()) walked.push(file.path);
              expect(walked).toStrictEqual([...valid].sort(comparePaths));
            });
            const deleted = await apply(lease, { delete: valid });
            expect(deleted.rootId).toBe(EMPTY_ROOT_ID);
          },
        ),
        { numRuns: 60 },
      );
      // Both sides of the rule were exercised.
      expect(accepted).toBeGreaterThan(20);
      expect(refused).toBeGreaterThan(20);
      expect((await lease.verify()).problems).toStrictEqual([]);
    }, 120_000);
  });

  describe("workspace: path conflicts", () => {
    async function seeded() {
      const { lease } = await newRun(fx);
      await apply(lease, { put: { "d/f": "in a directory", f: "a file" } });
      return lease;
    }
    const fresh = utf8("content no apply has stored yet");

    it("refuses a file where a directory is", async () => {
      const lease = await seeded();
      await expectRefusedUnchanged(lease, "path_conflict", () =>
        apply(lease, { put: { d: fresh, "other/new": fresh } }),
      );
    });

    it("refuses a path below a file", async () => {
      const lease = await seeded();
      await expectRefusedUnchanged(lease, "path_conflict", () =>
        apply(lease, { put: { "f/g": fresh, "other/new": fresh } }),
      );
      await expectRefusedUnchanged(lease, "path_conflict", () =>
        apply(lease, { put: { "f/g/h": fresh } }),
      );
    });

    it("refuses a put and a delete of the same path", async () => {
      const lease = await seeded();
      await expectRefusedUnchanged(lease, "path_conflict", () =>
        apply(lease, { put: { f: fresh }, delete: ["f"] }),
      );
      await expectRefusedUnchanged(lease, "path_conflict", () =>
        apply(lease, { put: { d: fresh }, delete: ["d"] }),
      );
      await expectRefusedUnchanged(lease, "path_conflict", () =>
        apply(lease, { put: { never: fresh }, delete: ["never"] }),
      );
    });

    it("refuses a file and a path below it in one apply, and a directory deleted while written into", async () => {
      const lease = await seeded();
      await expectRefusedUnchanged(lease, "path_conflict", () =>
        apply(lease, { put: { n: fresh, "n/m": fresh } }),
      );
      await expectRefusedUnchanged(lease, "path_conflict", () =>
        apply(lease, { put: { "d/g": fresh }, delete: ["d"] }),
      );
      await expectRefusedUnchanged(lease, "path_conflict", () =>
        apply(lease, { delete: ["f", "f"] }),
      );
    });

    it("refuses to delete what is not there", async () => {
      const lease = await seeded();
      await expectRefusedUnchanged(lease, "path_not_found", () =>
        apply(lease, { put: { "other/new": fresh }, delete: ["missing"] }),
      );
      await expectRefusedUnchanged(lease, "path_not_found", () =>
        apply(lease, { delete: ["d/missing"] }),
      );
    });

    it("leaves the caller's transaction usable after a refused apply", async () => {
      const lease = await seeded();
      const root = await lease.read((r) => r.workspace.currentRoot());
      const before = await dumpTables(lease);
      await lease.transact(async (tx) => {
        await tx.journal.append({ kind: "before" });
        expect(await codeOf(tx.workspace.apply({ put: { d: fresh, "x/y": fresh } }))).toBe(
          "path_conflict",
        );
        await tx.journal.append({ kind: "after" });
      });
      const after = await dumpTables(lease);
      for (const table of Object.keys(before).filter((t) => t !== "journal")) {
        expect(after[table], table).toStrictEqual(before[table]);
      }
      const events = await lease.read((r) => r.journal.list());
      expect(events.slice(-2).map((e) => [e.record, e.rootId])).toStrictEqual([
        [{ kind: "before" }, root],
        [{ kind: "after" }, root],
      ]);
    });
  });
}
