import { driverFailure, type RunledgerError } from "@runledger/core/port";

/**
 * better-sqlite3 reports SQLite failures as SqliteError with `code` holding the
 * extended result code string ("SQLITE_CONSTRAINT_FOREIGNKEY"). Anything else
 * it throws (TypeError, RangeError) is a misuse of the driver: keep it as
 * storage_error with the cause attached.
 */
export function translate(error: unknown, doing: string): RunledgerError {
  const code = (error as { code?: unknown } | null)?.code;
  return driverFailure(
    error,
    doing,
    typeof code === "string" && code.startsWith("SQLITE_") ? code : undefined,
  );
}
