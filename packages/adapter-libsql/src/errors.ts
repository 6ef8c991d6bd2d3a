import { driverFailure, RunledgerError, type RunledgerErrorCode } from "@runledger/core/port";
import { translateRemote } from "./remote-errors.js";

/** Codes @libsql/client uses for its own failures, not SQLite's. */
const CLIENT_CODES: Record<string, RunledgerErrorCode> = {
  CLIENT_CLOSED: "connection_closed",
  TRANSACTION_CLOSED: "transaction_closed",
  // A begin while this connection's transaction is open: the same code adapter-node gives.
  TRANSACTION_ACTIVE: "transaction_active",
  URL_INVALID: "invalid_location",
  URL_SCHEME_NOT_SUPPORTED: "invalid_location",
  URL_PARAM_NOT_SUPPORTED: "invalid_location",
};

/**
 * LibsqlError carries `code` (primary), `extendedCode` and `rawCode`; the
 * extended code string is the precise one. Errors the client raises itself
 * (a closed client, a bad URL, a network failure) have non-SQLite codes.
 * A remote server's answers go through `translateRemote` first.
 */
export function translate(error: unknown, doing: string, remote = false): RunledgerError {
  if (error instanceof RunledgerError) return error;
  if (remote) {
    const translated = translateRemote(error, doing);
    if (translated !== undefined) return translated;
  }
  const fields = (error ?? {}) as { code?: unknown; extendedCode?: unknown };
  const sqliteCode = [fields.extendedCode, fields.code].find(
    (code): code is string => typeof code === "string" && code.startsWith("SQLITE_"),
  );
  const own = typeof fields.code === "string" ? CLIENT_CODES[fields.code] : undefined;
  return driverFailure(error, doing, sqliteCode, own);
}
