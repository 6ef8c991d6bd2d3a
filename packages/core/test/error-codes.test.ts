/**
 * Error codes are a closed, typed list: ERROR_CODES (and the
 * RunledgerErrorCode union made from it) names exactly the codes
 * docs/errors.md documents, a RunledgerError can only be built with one of
 * them, and isRunledgerError narrows an unknown error to the code asked for.
 */
import { readFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { describe, expect, expectTypeOf, it } from "vitest";
import {
  ERROR_CODES,
  isRunledgerError,
  RunledgerError,
  type RunledgerErrorCode,
} from "../src/index.js";

const errorsDoc = readFileSync(
  fileURLToPath(new URL("../../../docs/errors.md", import.meta.url)),
  "utf8",
);

/** The codes docs/errors.md documents: the first cell of each table row. */
const documented = new Set(
  [...errorsDoc.matchAll(/^\| `([a-z_]+)`\s*\|/gm)].map((match) => match[1]!),
);

describe("the error codes", () => {
  it("lists each code once", () => {
    expect(new Set(ERROR_CODES).size).toBe(ERROR_CODES.length);
  });

  it("documents every code in docs/errors.md", () => {
    expect(ERROR_CODES.filter((code) => !documented.has(code))).toEqual([]);
  });

  it("has a code for everything docs/errors.md documents", () => {
    const known = new Set<string>(ERROR_CODES);
    expect([...documented].filter((code) => !known.has(code))).toEqual([]);
    expect(documented.size).toBeGreaterThan(60);
  });

  it("narrows an unknown error to the code asked for", () => {
    const caught: unknown = new RunledgerError("busy", "another connection held the lock");
    if (!isRunledgerError(caught, "busy")) throw new Error("a busy error was not recognized");
    expectTypeOf(caught.code).toEqualTypeOf<"busy">();
    expect(caught.code).toBe("busy");
    expect(isRunledgerError(caught, "poisoned")).toBe(false);
    expect(isRunledgerError(new Error("busy"), "busy")).toBe(false);
    expect(isRunledgerError({ code: "busy" })).toBe(false);
    const unknownError: unknown = caught;
    if (isRunledgerError(unknownError))
      expectTypeOf(unknownError.code).toEqualTypeOf<RunledgerErrorCode>();
  });

  it("builds a RunledgerError only with a documented code", () => {
    // @ts-expect-error: "no_such_code" is not a RunledgerErrorCode
    const wrong = new RunledgerError("no_such_code", "refused by the compiler");
    expect(documented.has(wrong.code)).toBe(false);
    const right = new RunledgerError("invalid_path", "a bad path", { details: { path: ".." } });
    expectTypeOf(right.code).toEqualTypeOf<"invalid_path">();
    expectTypeOf<RunledgerError>().toMatchTypeOf<{ code: RunledgerErrorCode }>();
  });
});
