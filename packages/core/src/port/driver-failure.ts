/**
 * A driver's failure as the port's error, built the same way by every
 * adapter: the adapter reads off the failure what only it can (the SQLite
 * result code its driver reports, from a field or from the message), and
 * this gives the message, the cause and the code their one form.
 */
import type { RunledgerErrorCode } from "./codes.js";
import { fromSqliteFailure, RunledgerError } from "./errors.js";

/**
 * `error` as a RunledgerError: one already is passes through unchanged;
 * otherwise the message reads `doing: <the driver's message>`, the error is
 * the cause, and the code is what `fromSqliteFailure` gives for
 * `sqliteCode` — the most precise SQLite result code the adapter found — or,
 * without one, `otherwise`: a driver's own failure (`connection_closed`,
 * `invalid_location`, …), by default `storage_error` (a misuse of the
 * driver, a TypeError).
 *
 * @example
 * // In an adapter whose driver reports SQLite's code as `code`:
 * const code = (error as { code?: unknown }).code;
 * throw driverFailure(error, "statement failed", typeof code === "string" ? code : undefined);
 */
export function driverFailure(
  error: unknown,
  doing: string,
  sqliteCode: string | undefined,
  otherwise: RunledgerErrorCode = "storage_error",
): RunledgerError {
  if (error instanceof RunledgerError) return error;
  const message = `${doing}: ${error instanceof Error ? error.message : String(error)}`;
  if (sqliteCode !== undefined) return fromSqliteFailure(sqliteCode, message, error);
  return new RunledgerError(otherwise, message, { cause: error });
}
