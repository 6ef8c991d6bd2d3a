import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { libsqlDriver } from "@runledger/adapter-libsql";
import { type DriverConnection, isRunledgerError } from "@runledger/core/port";
import { afterEach, describe, expect, it } from "vitest";

// The adapter turns V8's stack capture off while @libsql/client runs a
// statement synchronously (see withoutStackCapture in src/connection.ts).
// These tests hold it to what that comment promises: the limit comes back
// exactly as it was, and a failure still reaches the caller with a stack.

const directories: string[] = [];
afterEach(() => {
  for (const directory of directories.splice(0))
    rmSync(directory, { recursive: true, force: true });
});

async function openConnection(): Promise<DriverConnection> {
  const directory = mkdtempSync(join(tmpdir(), "runledger-libsql-stack-"));
  directories.push(directory);
  const connection = await libsqlDriver().open(join(directory, "stack.db"), {
    create: true,
    readOnly: false,
    busyTimeoutMs: 1000,
  });
  await connection.executeScript("CREATE TABLE t (x INTEGER NOT NULL)");
  return connection;
}

async function failureOf(action: () => Promise<unknown>): Promise<unknown> {
  try {
    await action();
  } catch (error) {
    return error;
  }
  throw new Error("expected a failure");
}

describe("adapter-libsql runs statements with stack capture off", () => {
  it("leaves Error.stackTraceLimit as it found it after a statement, a failed one and a commit", async () => {
    const connection = await openConnection();
    const before = Error.stackTraceLimit;
    Error.stackTraceLimit = 17;
    try {
      const transaction = await connection.begin("immediate");
      await transaction.execute("INSERT INTO t (x) VALUES (?)", [1]);
      expect(Error.stackTraceLimit).toBe(17);
      await failureOf(() => transaction.execute("INSERT INTO t (x) VALUES (NULL)"));
      expect(Error.stackTraceLimit).toBe(17);
      await transaction.commit();
      expect(Error.stackTraceLimit).toBe(17);
      await connection.execute("SELECT x FROM t");
      expect(Error.stackTraceLimit).toBe(17);
    } finally {
      Error.stackTraceLimit = before;
      await connection.close();
    }
  });

  it("a failed statement reaches the caller as a RunledgerError with a stack, the client's error as its cause", async () => {
    const connection = await openConnection();
    try {
      const transaction = await connection.begin("immediate");
      const error = await failureOf(() => transaction.execute("INSERT INTO t (x) VALUES (NULL)"));
      expect(isRunledgerError(error, "constraint_not_null")).toBe(true);
      const stack = (error as Error).stack ?? "";
      expect(
        stack.split("\n").filter((line) => line.trim().startsWith("at ")).length,
      ).toBeGreaterThan(0);
      const cause = (error as Error).cause as { code?: string } | undefined;
      expect(cause).toBeInstanceOf(Error);
      expect(cause?.code).toMatch(/^SQLITE_CONSTRAINT/);
      await transaction.rollback();
    } finally {
      await connection.close();
    }
  });
});
