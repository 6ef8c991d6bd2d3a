/**
 * How an adapter opens a file read-only without writing (port/read-only.ts):
 * the plan chosen from the header and the side files, and the URI built for it.
 */
import { describe, expect, it } from "vitest";
import { RunledgerError } from "../src/port/errors.js";
import { isWalHeader, planReadOnlyOpen, readOnlyUri } from "../src/port/read-only.js";

function header(version: number): Uint8Array {
  const bytes = new Uint8Array(100);
  bytes.set(new TextEncoder().encode("SQLite format 3\u0000"));
  bytes[18] = version;
  bytes[19] = version;
  return bytes;
}
const WAL = header(2);
const ROLLBACK = header(1);

describe("planReadOnlyOpen", () => {
  it("opens a rollback-journal or empty file with the read-only flag alone", () => {
    for (const facts of [
      { header: ROLLBACK, walBytes: undefined, shm: false },
      { header: ROLLBACK, walBytes: 4096, shm: false },
      { header: new Uint8Array(0), walBytes: undefined, shm: false },
    ]) {
      expect(planReadOnlyOpen("/r.db", facts)).toBe("read-only");
    }
  });

  it("opens a WAL file nobody has open (no -wal, or an empty one) as immutable", () => {
    expect(planReadOnlyOpen("/r.db", { header: WAL, walBytes: undefined, shm: false })).toBe(
      "immutable",
    );
    expect(planReadOnlyOpen("/r.db", { header: WAL, walBytes: 0, shm: true })).toBe("immutable");
  });

  it("uses an existing -wal and -shm as they are", () => {
    expect(planReadOnlyOpen("/r.db", { header: WAL, walBytes: 8272, shm: true })).toBe("read-only");
  });

  it("refuses commits in a -wal whose -shm is missing with needs_recovery", () => {
    let error: unknown;
    try {
      planReadOnlyOpen("/r.db", { header: WAL, walBytes: 8272, shm: false });
    } catch (caught) {
      error = caught;
    }
    expect(error).toBeInstanceOf(RunledgerError);
    expect((error as RunledgerError).code).toBe("needs_recovery");
  });

  it("reads WAL mode only from a SQLite header", () => {
    expect(isWalHeader(WAL)).toBe(true);
    expect(isWalHeader(ROLLBACK)).toBe(false);
    const garbage = WAL.slice();
    garbage[0] = 0;
    expect(isWalHeader(garbage)).toBe(false);
    expect(isWalHeader(WAL.subarray(0, 19))).toBe(false);
  });
});

describe("readOnlyUri", () => {
  it("asks SQLite for mode=ro, and immutable=1 where planned, escaping the path", () => {
    expect(readOnlyUri("/a/r.db", "read-only")).toBe("file:/a/r.db?mode=ro");
    expect(readOnlyUri("/a/r.db", "immutable")).toBe("file:/a/r.db?mode=ro&immutable=1");
    expect(readOnlyUri("/a/100%?#.db", "read-only")).toBe("file:/a/100%25%3F%23.db?mode=ro");
  });
});
