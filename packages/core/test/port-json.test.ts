import { describe, expect, it } from "vitest";
import { RunledgerError } from "../src/port/errors.js";
import { toJsonText } from "../src/port/json.js";

function refusal(value: unknown, requireObject = true): RunledgerError {
  try {
    toJsonText(value, "the record", requireObject);
  } catch (error) {
    if (error instanceof RunledgerError) return error;
    throw error;
  }
  throw new Error("expected a refusal");
}

describe("journal records are JSON exactly", () => {
  it("serializes a plain record as JSON.stringify would", () => {
    const record = { kind: "step", n: 1, ok: true, none: null, list: [1, "a", { b: [] }] };
    expect(toJsonText(record, "the record", true)).toBe(JSON.stringify(record));
  });

  it("accepts the same object reached twice (shared, not cyclic)", () => {
    const shared = { x: 1 };
    expect(toJsonText({ a: shared, b: [shared, shared] }, "the record", true)).toBe(
      '{"a":{"x":1},"b":[{"x":1},{"x":1}]}',
    );
  });

  it.each([
    ["undefined", { a: { b: undefined } }, "the record.a.b is a undefined"],
    ["a function", { list: [1, () => 1] }, "the record.list[1] is a function"],
    ["NaN", { n: Number.NaN }, "the record.n is NaN"],
    ["Infinity", { deep: [[Number.POSITIVE_INFINITY]] }, "the record.deep[0][0] is Infinity"],
    ["a bigint", { big: 1n }, "the record.big is a bigint"],
    ["a class instance", { at: new Date(0) }, "the record.at is a class instance"],
  ])("refuses %s with invalid_json and the path to it", (_name, value, message) => {
    const error = refusal(value);
    expect(error.code).toBe("invalid_json");
    expect(error.message).toContain(message);
  });

  it("refuses a cycle", () => {
    const cyclic: Record<string, unknown> = { a: [] };
    (cyclic.a as unknown[]).push(cyclic);
    const error = refusal(cyclic);
    expect(error.code).toBe("invalid_json");
    expect(error.message).toContain("the record.a[0] refers to itself");
  });

  it("refuses nesting deeper than 256 levels, and accepts 256", () => {
    const nest = (levels: number): unknown => {
      let value: unknown = 0;
      for (let i = 0; i < levels; i++) value = [value];
      return value;
    };
    expect(() => toJsonText({ v: nest(255) }, "the record", true)).not.toThrow();
    expect(refusal({ v: nest(256) }).message).toContain("nests deeper than 256 levels");
  });

  it("refuses a record that is not a plain object when one is required", () => {
    expect(refusal([1, 2]).message).toContain("must be a plain JSON object");
    expect(toJsonText([1, 2], "a value")).toBe("[1,2]");
  });
});
