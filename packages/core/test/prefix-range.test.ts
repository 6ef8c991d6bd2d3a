/**
 * The successor bound behind every listing by prefix
 * (port/prefix-range.ts), checked against its definition
 * in UTF-8 byte order — SQLite's BINARY collation — for arbitrary text,
 * astral characters and U+FFFF included.
 */
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { prefixSuccessor } from "../src/port/prefix-range.js";

const utf8 = (text: string) => Buffer.from(text, "utf8");
const compare = (a: string, b: string) => Buffer.compare(utf8(a), utf8(b));

const character = fc.oneof(
  fc.constantFrom("\uffff", "\ufffe", "\u{10000}", "😀", "\u{10ffff}", "\ud7ff", "\ue000", "a"),
  fc
    .integer({ min: 0, max: 0x10ffff })
    .filter((point) => point < 0xd800 || point > 0xdfff)
    .map((point) => String.fromCodePoint(point)),
);
const text = fc.array(character, { maxLength: 6 }).map((chars) => chars.join(""));

describe("prefixSuccessor", () => {
  it("bounds exactly the strings that start with the prefix", () => {
    fc.assert(
      fc.property(text, text, (prefix, other) => {
        const upper = prefixSuccessor(prefix);
        const inRange =
          compare(other, prefix) >= 0 && (upper === undefined || compare(other, upper) < 0);
        expect(inRange).toBe(utf8(other).subarray(0, utf8(prefix).length).equals(utf8(prefix)));
        // Every extension of the prefix is in range, whatever follows.
        const extended = prefix + other;
        expect(upper === undefined || compare(extended, upper) < 0).toBe(true);
      }),
      { numRuns: 2_000 },
    );
  });

  it("moves past U+FFFF and astral characters, where prefix + U+FFFF stops short", () => {
    expect(compare("a😀", "a\uffff")).toBeGreaterThan(0);
    expect(compare("a😀", prefixSuccessor("a") as string)).toBeLessThan(0);
    expect(prefixSuccessor("a\uffff")).toBe("a\u{10000}");
    expect(prefixSuccessor("a\ud7ff")).toBe("a\ue000");
    expect(prefixSuccessor("a\u{10ffff}")).toBe("b");
    expect(prefixSuccessor("\u{10ffff}\u{10ffff}")).toBeUndefined();
    expect(prefixSuccessor("")).toBeUndefined();
  });
});
