import { describe, expect, it } from "vitest";
import { fromHex, HEX_PAIRS, toHex } from "../src/port/bytes.js";

/** Hex as the table reads it, pair by pair: what toHex must equal. */
const pairwise = (bytes: Uint8Array) => Array.from(bytes, (byte) => HEX_PAIRS[byte]).join("");

describe("toHex", () => {
  it("writes every byte value as its two lower-case digits", () => {
    const every = Uint8Array.from({ length: 256 }, (_, i) => i);
    const hex = toHex(every);
    expect(hex).toBe(pairwise(every));
    expect(hex).toMatch(/^[0-9a-f]{512}$/);
    expect(fromHex(hex)).toStrictEqual(every);
  });

  it("writes inputs shorter than, as long as and longer than a digest", () => {
    for (const length of [0, 1, 31, 32, 33, 64, 1000]) {
      const bytes = Uint8Array.from({ length }, (_, i) => (i * 37 + length) & 0xff);
      expect(toHex(bytes), `${length} bytes`).toBe(pairwise(bytes));
    }
  });

  it("gives strings that stay as they were after later calls", () => {
    const first = toHex(new Uint8Array(32).fill(0xab));
    const second = toHex(new Uint8Array(32).fill(0x01));
    const short = toHex(Uint8Array.of(0xff));
    expect([first, second, short]).toStrictEqual(["ab".repeat(32), "01".repeat(32), "ff"]);
  });
});
