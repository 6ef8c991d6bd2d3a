import { describe, expect, it } from "vitest";
import { isSqlValue, normalizeInteger, normalizeRow, plainBytes } from "../src/port/values.js";

describe("normalizeInteger", () => {
  it("narrows integers inside ±(2^53−1) to number", () => {
    expect(normalizeInteger(0n)).toBe(0);
    expect(normalizeInteger(-1n)).toBe(-1);
    expect(normalizeInteger(9007199254740991n)).toBe(Number.MAX_SAFE_INTEGER);
    expect(normalizeInteger(-9007199254740991n)).toBe(Number.MIN_SAFE_INTEGER);
  });

  it("keeps integers beyond the safe range as exact bigint", () => {
    expect(normalizeInteger(9007199254740992n)).toBe(9007199254740992n);
    expect(normalizeInteger(9007199254740993n)).toBe(9007199254740993n);
    expect(normalizeInteger(-9007199254740992n)).toBe(-9007199254740992n);
    expect(normalizeInteger(2n ** 63n - 1n)).toBe(2n ** 63n - 1n);
  });
});

describe("plainBytes", () => {
  it("turns a Buffer into a plain Uint8Array over the same memory", () => {
    const buffer = Buffer.from([1, 2, 3, 4, 5]).subarray(1, 4);
    const bytes = plainBytes(buffer);
    expect(Object.getPrototypeOf(bytes)).toBe(Uint8Array.prototype);
    expect([...bytes]).toStrictEqual([2, 3, 4]);
    buffer[0] = 9;
    expect(bytes[0], "a view, not a copy").toBe(9);
  });

  it("returns a plain Uint8Array unchanged", () => {
    const bytes = Uint8Array.of(1, 2);
    expect(plainBytes(bytes)).toBe(bytes);
  });
});

describe("isSqlValue", () => {
  it("accepts exactly null, number, bigint, string and byte arrays", () => {
    for (const value of [null, 0, 1.5, 2n ** 60n, "", "x", new Uint8Array(0), Buffer.from("a")]) {
      expect(isSqlValue(value), String(value)).toBe(true);
    }
    for (const value of [undefined, true, {}, [], new ArrayBuffer(1), new Date(0)]) {
      expect(isSqlValue(value), String(value)).toBe(false);
    }
  });
});

describe("normalizeRow", () => {
  it("narrows a row's integers and makes its blobs plain, in the row it was given", () => {
    const row: Record<string, unknown> = {
      small: 7n,
      large: 2n ** 60n,
      blob: Buffer.from([1, 2, 3]),
      text: "x",
      real: 1.5,
      none: null,
    };
    const normalized = normalizeRow(row);
    expect(normalized).toBe(row);
    expect(normalized.small).toBe(7);
    expect(normalized.large).toBe(2n ** 60n);
    expect(Object.getPrototypeOf(normalized.blob)).toBe(Uint8Array.prototype);
    expect([...(normalized.blob as Uint8Array)]).toStrictEqual([1, 2, 3]);
    expect([normalized.text, normalized.real, normalized.none]).toStrictEqual(["x", 1.5, null]);
  });
});
