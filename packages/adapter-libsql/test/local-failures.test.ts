/**
 * A local file's connection (src/local.ts) runs libSQL's engine directly:
 * what it does when a statement fails. A statement that failed busy is left
 * active by the engine, which would make every later COMMIT on the handle
 * fail; the connection replaces the handle before its next call.
 */
import { libsqlDriver } from "@runledger/adapter-libsql";
import { type DriverConnection, isRunledgerError } from "@runledger/core/port";
import Libsql from "libsql";
import { describe, expect, it } from "vitest";
import { failureOf } from "./support/failures.js";
import { temporaryDatabases } from "./support/temporary.js";

const newPath = temporaryDatabases("local");

async function openConnection(path: string, busyTimeoutMs = 1000): Promise<DriverConnection> {
  return libsqlDriver().open(path, { create: true, readOnly: false, busyTimeoutMs });
}

describe("adapter-libsql, a local file: failed statements", () => {
  it("a failed statement reaches the caller as a RunledgerError with a stack, the engine's error as its cause", async () => {
    const connection = await openConnection(newPath());
    try {
      await connection.executeScript("CREATE TABLE t (x INTEGER NOT NULL)");
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

  it("after a statement failed busy, the next transaction on the connection commits", async () => {
    const path = newPath();
    const connection = await openConnection(path, 50);
    // Another handle of this process holds the write lock.
    const other = new (
      Libsql as unknown as new (
        path: string,
      ) => {
        exec(sql: string): void;
        close(): void;
      }
    )(path);
    try {
      await connection.executeScript("PRAGMA journal_mode = wal; CREATE TABLE t (x INTEGER)");
      other.exec("BEGIN IMMEDIATE; INSERT INTO t VALUES (0)");
      const busy = await failureOf(() => connection.execute("INSERT INTO t (x) VALUES (?)", [1]));
      expect(isRunledgerError(busy, "busy")).toBe(true);
      other.exec("COMMIT");
      // The same statement again, in a transaction: the engine would refuse this COMMIT
      // ("SQL statements in progress") on the handle the busy statement was left on.
      const transaction = await connection.begin("immediate");
      await transaction.execute("INSERT INTO t (x) VALUES (?)", [2]);
      await transaction.commit();
      const { rows } = await connection.execute("SELECT x FROM t ORDER BY x");
      expect(rows).toStrictEqual([{ x: 0 }, { x: 2 }]);
    } finally {
      other.close();
      await connection.close();
    }
  });
});
