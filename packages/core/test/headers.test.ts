/**
 * Every source file of core opens with a comment saying why it exists, so a
 * newcomer reading any file learns its place before its code. A comment
 * further down, on an export, documents that export, not the file.
 */
import { readFileSync } from "node:fs";
import { relative } from "node:path";
import { describe, expect, it } from "vitest";
import { SRC, sourceFiles } from "./source-files.js";

/** True when the text opens with a block comment of at least one sentence. */
function hasHeader(text: string): boolean {
  const comment = text.match(/^\/\*\*?([\s\S]*?)\*\//)?.[1] ?? "";
  return comment.replace(/[\s*]+/g, " ").trim().length >= 20;
}

describe("core's source files", () => {
  it("each opens with a header comment saying why it exists", () => {
    const files = sourceFiles();
    expect(files.length).toBeGreaterThan(80);
    const without = files
      .filter((file) => !hasHeader(readFileSync(file, "utf8")))
      .map((file) => relative(SRC, file));
    expect(without).toStrictEqual([]);
  });

  it("a file whose first comment comes after its imports has no header", () => {
    expect(
      hasHeader('import { a } from "./a.js";\n/** The thing. It exists for a reason. */'),
    ).toBe(false);
    expect(hasHeader("/** */\nexport const a = 1;")).toBe(false);
    expect(hasHeader("/**\n * Why this file exists, in a sentence.\n */\n")).toBe(true);
  });
});
