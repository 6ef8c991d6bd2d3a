import { describe, expect, it } from "vitest";
import { driverFailure } from "../src/port/driver-failure.js";
import { RunledgerError } from "../src/port/errors.js";

describe("driverFailure", () => {
  it("passes a RunledgerError through unchanged, whatever code is given", () => {
    const own = new RunledgerError("busy", "already translated");
    expect(driverFailure(own, "statement failed", "SQLITE_CONSTRAINT", "invalid_location")).toBe(
      own,
    );
  });

  it("gives a failure with a SQLite code the stable code that code translates to", () => {
    const cause = new Error("FOREIGN KEY constraint failed");
    const failure = driverFailure(cause, "statement failed", "SQLITE_CONSTRAINT_FOREIGNKEY");
    expect(failure.code).toBe("constraint_foreign_key");
    expect(failure.sqliteCode).toBe("SQLITE_CONSTRAINT_FOREIGNKEY");
    expect(failure.message).toMatch(/^statement failed: FOREIGN KEY constraint failed/);
    expect(failure.cause).toBe(cause);
  });

  it("gives a failure without one storage_error, or the driver's own code when given", () => {
    const cause = new TypeError("bad argument");
    const misuse = driverFailure(cause, "statement failed", undefined);
    expect([misuse.code, misuse.message, misuse.cause]).toStrictEqual([
      "storage_error",
      "statement failed: bad argument",
      cause,
    ]);
    expect(misuse.sqliteCode).toBeUndefined();
    const closed = driverFailure(cause, "close failed", undefined, "connection_closed");
    expect([closed.code, closed.message]).toStrictEqual([
      "connection_closed",
      "close failed: bad argument",
    ]);
  });

  it("names a thrown value that is no Error by its text", () => {
    const failure = driverFailure("disk gone", "script failed", undefined);
    expect([failure.code, failure.message, failure.cause]).toStrictEqual([
      "storage_error",
      "script failed: disk gone",
      "disk gone",
    ]);
  });
});
