import { fromSqliteFailure, RunledgerError } from "@runledger/core/port";

/**
 * better-sqlite3 reports SQLite failures as SqliteError with `code` holding the
 * extended result code string ("SQLITE_CONSTRAINT_FOREIGNKEY"). Anything else
 * it throws (TypeError, RangeError) is a misuse of the driver: keep it as
 * storage_error with the cause attached.
 */
export function translate(error: unknown, doing: string): RunledgerError {
  if (error instanceof RunledgerError) return error;
  const code = (error as { code?: unknown } | null)?.code;
  const message = error instanceof Error ? error.message : String(error);
  if (typeof code === "string" && code.startsWith("SQLITE_")) {
    return fromSqliteFailure(code, `${doing}: ${message}`, error);
  }
  return new RunledgerError("storage_error", `${doing}: ${message}`, { cause: error });
}
