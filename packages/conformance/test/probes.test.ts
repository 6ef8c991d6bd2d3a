/**
 * The shared probes every family leans on: if one of them let a success pass
 * for a failure, or a plain Error for a RunledgerError, every test using it
 * would prove less than its title says.
 */
import { RunledgerError } from "@runledger/core";
import { describe, expect, it } from "vitest";
import { codeOf, failureOf, sha256Hex, thrownBy } from "../src/fixtures.js";

const busy = () => new RunledgerError("busy", "the database is locked");

describe("probes", () => {
  it("thrownBy returns what the action threw, and fails the test when it resolves", async () => {
    const error = new Error("boom");
    expect(await thrownBy(() => Promise.reject(error))).toBe(error);
    await expect(thrownBy(() => Promise.resolve(1))).rejects.toThrow(/succeeded/);
  });

  it("thrownBy and failureOf take a synchronous throw as the failure (some drivers throw before returning a promise)", async () => {
    const error = busy();
    const throwsNow = (): Promise<unknown> => {
      throw error;
    };
    expect(await thrownBy(throwsNow)).toBe(error);
    expect(await failureOf(throwsNow)).toBe(error);
  });

  it("failureOf accepts only a RunledgerError", async () => {
    const error = busy();
    expect(await failureOf(() => Promise.reject(error))).toBe(error);
    await expect(failureOf(() => Promise.reject(new Error("plain")))).rejects.toThrow(
      /must be a RunledgerError/,
    );
  });

  it("codeOf says ok, the stable code, or what a code-less error was", async () => {
    expect(await codeOf(Promise.resolve("x"))).toBe("ok");
    expect(await codeOf(Promise.reject(busy()))).toBe("busy");
    expect(await codeOf(Promise.reject(new Error("plain")))).toBe(
      "non-runledger error: Error: plain",
    );
  });

  it("sha256Hex hashes a string as its UTF-8 bytes", () => {
    const known = "2cf24dba5fb0a30e26e83b2ac5b9e29e1b161e5c1fa7425e73043362938b9824";
    expect(sha256Hex("hello")).toBe(known);
    expect(sha256Hex(new TextEncoder().encode("hello"))).toBe(known);
    expect(sha256Hex("é")).toBe(sha256Hex(new Uint8Array([0xc3, 0xa9])));
  });
});
