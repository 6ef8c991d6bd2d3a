import { describe, expect, it } from "vitest";
import { timeOrderedId } from "../src/port/ids.js";

const UUID_V7 = /^[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/;

/** The 48-bit millisecond timestamp an id carries. */
function millisecondsOf(id: string): number {
  return Number.parseInt(id.replaceAll("-", "").slice(0, 12), 16);
}

describe("default ids (UUID version 7)", () => {
  it("are RFC 9562 version-7 UUIDs carrying the clock's milliseconds", () => {
    const now = Date.UTC(2031, 4, 6, 7, 8, 9, 123);
    const id = timeOrderedId(now);
    expect(id).toMatch(UUID_V7);
    expect(millisecondsOf(id)).toBe(now);
  });

  it("sort in the order they were made, also within one millisecond", () => {
    const now = Date.UTC(2032, 0, 1);
    const ids = Array.from({ length: 3000 }, () => timeOrderedId(now));
    expect(new Set(ids).size).toBe(ids.length);
    expect([...ids].sort()).toEqual(ids);
  });

  it("advance the timestamp instead of repeating when a millisecond's counter runs out", () => {
    const now = Date.UTC(2033, 0, 1);
    const ids = Array.from({ length: 5000 }, () => timeOrderedId(now));
    expect(millisecondsOf(ids.at(-1)!)).toBe(now + 1);
    expect([...ids].sort()).toEqual(ids);
  });

  it("never go backwards when the clock does", () => {
    const later = timeOrderedId(Date.UTC(2034, 0, 1));
    const earlier = timeOrderedId(Date.UTC(2020, 0, 1));
    expect(earlier > later).toBe(true);
  });
});
