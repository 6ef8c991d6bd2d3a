/**
 * node-sqlite3-wasm throws SQLite3Error carrying only SQLite's message text:
 * no result code at all. This file turns the messages SQLite itself writes
 * into the most precise result code the text proves, so core's translation
 * (stable `code`, advice) applies. Where the text cannot tell two extended
 * codes apart (a PRIMARY KEY and a UNIQUE violation both read "UNIQUE
 * constraint failed") it gives the one the text names; the subject declares
 * `extendedErrorCodes: false` so the conformance tests that need the exact
 * extended code are skipped, with that reason.
 */
import { driverFailure, type RunledgerError } from "@runledger/core/port";

/** Message patterns SQLite writes (sqlite3ErrStr and the constraint messages), most precise first. */
const BY_MESSAGE: readonly (readonly [RegExp, string])[] = [
  [/^UNIQUE constraint failed/, "SQLITE_CONSTRAINT_UNIQUE"],
  [/^NOT NULL constraint failed/, "SQLITE_CONSTRAINT_NOTNULL"],
  [/^CHECK constraint failed/, "SQLITE_CONSTRAINT_CHECK"],
  [/^FOREIGN KEY constraint failed/, "SQLITE_CONSTRAINT_FOREIGNKEY"],
  [/^cannot store .* value in .* column/, "SQLITE_CONSTRAINT_DATATYPE"],
  [/constraint failed/, "SQLITE_CONSTRAINT"],
  [/^database is locked/, "SQLITE_BUSY"],
  [/^database table is locked/, "SQLITE_LOCKED"],
  [/^attempt to write a readonly database/, "SQLITE_READONLY"],
  [/^unable to open database file/, "SQLITE_CANTOPEN"],
  [/^Could not open the database/, "SQLITE_CANTOPEN"],
  [/^file is not a database/, "SQLITE_NOTADB"],
  [/^database disk image is malformed/, "SQLITE_CORRUPT"],
  [/^database or disk is full/, "SQLITE_FULL"],
  [/^disk I\/O error/, "SQLITE_IOERR"],
  [/^string or blob too big/, "SQLITE_TOOBIG"],
  [/^datatype mismatch/, "SQLITE_MISMATCH"],
  [/^column index out of range|^bind or column index out of range/, "SQLITE_RANGE"],
  [/^interrupted/, "SQLITE_INTERRUPT"],
  [/^out of memory/, "SQLITE_NOMEM"],
  [/^access permission denied/, "SQLITE_PERM"],
  [/^locking protocol/, "SQLITE_PROTOCOL"],
  [/^database schema has changed/, "SQLITE_SCHEMA"],
];

/** The result code a SQLite message proves, or undefined when it is not one of SQLite's. */
export function codeFromMessage(message: string): string | undefined {
  for (const [pattern, code] of BY_MESSAGE) if (pattern.test(message)) return code;
  return undefined;
}

/** Everything else SQLite reports through sqlite3_errmsg is a plain SQL error. */
function isSqliteError(error: unknown): error is Error {
  return error instanceof Error && error.name === "SQLite3Error";
}

export function translate(error: unknown, doing: string): RunledgerError {
  if (!isSqliteError(error)) return driverFailure(error, doing, undefined);
  if (error.message === "Database already closed") {
    return driverFailure(error, doing, undefined, "connection_closed");
  }
  return driverFailure(error, doing, codeFromMessage(error.message) ?? "SQLITE_ERROR");
}
