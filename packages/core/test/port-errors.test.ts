import { describe, expect, it } from "vitest";
import {
  fromSqliteFailure,
  isRunledgerError,
  primaryCodeOf,
  RunledgerError,
} from "../src/port/errors.js";

describe("primaryCodeOf", () => {
  it("strips the extension of an extended result code", () => {
    expect(primaryCodeOf("SQLITE_CONSTRAINT_FOREIGNKEY")).toBe("SQLITE_CONSTRAINT");
    expect(primaryCodeOf("SQLITE_IOERR_SHORT_READ")).toBe("SQLITE_IOERR");
    expect(primaryCodeOf("SQLITE_BUSY_SNAPSHOT")).toBe("SQLITE_BUSY");
  });

  it("leaves a primary result code as it is", () => {
    expect(primaryCodeOf("SQLITE_BUSY")).toBe("SQLITE_BUSY");
    expect(primaryCodeOf("SQLITE_NOTADB")).toBe("SQLITE_NOTADB");
  });
});

describe("fromSqliteFailure", () => {
  it("lets an extended code with its own meaning beat its primary code", () => {
    const table: Record<string, string> = {
      SQLITE_CONSTRAINT_FOREIGNKEY: "constraint_foreign_key",
      SQLITE_CONSTRAINT_UNIQUE: "constraint_unique",
      SQLITE_CONSTRAINT_PRIMARYKEY: "constraint_unique",
      SQLITE_CONSTRAINT_NOTNULL: "constraint_not_null",
      SQLITE_CONSTRAINT_CHECK: "constraint_check",
      SQLITE_CONSTRAINT_DATATYPE: "constraint_datatype",
    };
    for (const [sqliteCode, code] of Object.entries(table)) {
      expect(fromSqliteFailure(sqliteCode, "failed", undefined).code, sqliteCode).toBe(code);
    }
  });

  it("falls back to the primary code for an extended code without a meaning of its own", () => {
    const table: Record<string, string> = {
      SQLITE_CONSTRAINT_TRIGGER: "constraint",
      SQLITE_BUSY_SNAPSHOT: "busy",
      SQLITE_BUSY_RECOVERY: "busy",
      SQLITE_IOERR_SHORT_READ: "io_error",
      SQLITE_CANTOPEN_ISDIR: "cannot_open",
      SQLITE_READONLY_DBMOVED: "read_only",
      SQLITE_CORRUPT_INDEX: "corrupt",
    };
    for (const [sqliteCode, code] of Object.entries(table)) {
      expect(fromSqliteFailure(sqliteCode, "failed", undefined).code, sqliteCode).toBe(code);
    }
  });

  it("translates the primary codes the conformance suite relies on", () => {
    expect(fromSqliteFailure("SQLITE_BUSY", "x", undefined).code).toBe("busy");
    expect(fromSqliteFailure("SQLITE_NOTADB", "x", undefined).code).toBe("not_a_database");
    expect(fromSqliteFailure("SQLITE_CANTOPEN", "x", undefined).code).toBe("cannot_open");
    expect(fromSqliteFailure("SQLITE_READONLY", "x", undefined).code).toBe("read_only");
    expect(fromSqliteFailure("SQLITE_ERROR", "x", undefined).code).toBe("sql_error");
  });

  it("answers storage_error for an unknown code and for no code at all", () => {
    for (const sqliteCode of ["SQLITE_SOMETHING_NEW", "SQLITE_UNKNOWN_99", "SQLITE_WARNING"]) {
      expect(fromSqliteFailure(sqliteCode, "x", undefined).code, sqliteCode).toBe("storage_error");
    }
    const none = fromSqliteFailure(undefined, "x", undefined);
    expect(none.code).toBe("storage_error");
    expect(none.sqliteCode).toBeUndefined();
    expect(none.sqlitePrimaryCode).toBeUndefined();
  });

  it("keeps the SQLite codes, the cause and the caller's message, with advice added", () => {
    const cause = new Error("FOREIGN KEY constraint failed");
    const error = fromSqliteFailure("SQLITE_CONSTRAINT_FOREIGNKEY", "insert failed", cause);
    expect(error).toBeInstanceOf(RunledgerError);
    expect(error).toBeInstanceOf(Error);
    expect(error.name).toBe("RunledgerError");
    expect(error.sqliteCode).toBe("SQLITE_CONSTRAINT_FOREIGNKEY");
    expect(error.sqlitePrimaryCode).toBe("SQLITE_CONSTRAINT");
    expect(error.cause).toBe(cause);
    expect(error.message.startsWith("insert failed (")).toBe(true);
    expect(error.message.length).toBeGreaterThan("insert failed ()".length);
  });

  it("attaches no cause when there is none", () => {
    const error = fromSqliteFailure("SQLITE_CANTOPEN", "cannot open", undefined);
    expect(error.cause).toBeUndefined();
    expect("cause" in error).toBe(false);
  });
});

describe("RunledgerError", () => {
  it("carries code, details and derives the primary code", () => {
    const error = new RunledgerError("schema_mismatch", "differs", {
      sqliteCode: "SQLITE_CORRUPT_VTAB",
      details: { missing: ["index_a"] },
    });
    expect(error.code).toBe("schema_mismatch");
    expect(error.sqlitePrimaryCode).toBe("SQLITE_CORRUPT");
    expect(error.details).toStrictEqual({ missing: ["index_a"] });
  });

  it("is recognized by isRunledgerError, by code when one is given", () => {
    const error = new RunledgerError("busy", "locked");
    expect(isRunledgerError(error)).toBe(true);
    expect(isRunledgerError(error, "busy")).toBe(true);
    expect(isRunledgerError(error, "corrupt")).toBe(false);
    expect(isRunledgerError(new Error("busy"))).toBe(false);
    expect(isRunledgerError({ code: "busy" })).toBe(false);
  });
});
