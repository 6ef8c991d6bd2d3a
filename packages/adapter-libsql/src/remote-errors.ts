/**
 * What a libSQL server (sqld, Turso) answers differently from a local file,
 * turned into the port's errors. Measured against sqld 0.24.32:
 * - its SQLite failures carry the primary code only (`SQLITE_CONSTRAINT`, no
 *   extended code), and what SQLite calls SQLITE_ERROR arrives as
 *   `SQLITE_UNKNOWN` ("no such table", "cannot commit - no transaction is
 *   active"); statements it refuses to parse are `SQL_PARSE_ERROR` /
 *   `SQL_INPUT_ERROR`;
 * - a write transaction held 5 s while another writer waits is taken away
 *   (`TRANSACTION_TIMEOUT`; its earlier statements are rolled back), and a
 *   commit after that answers "no transaction is active";
 * - an idle HTTP stream expires after about 10 s (`STREAM_EXPIRED`);
 * - a refused token is HTTP 401; over WebSocket an AUTH_* error, or a
 *   handshake that just closes;
 * - a missing namespace is HTTP 404 "Namespace `x` doesn't exist".
 * A constraint's kind is read back from SQLite's own message ("FOREIGN KEY
 * constraint failed", a trigger's RAISE text), which the server passes on
 * unchanged, so `code` and the extended `sqliteCode` (and core's decisions
 * that depend on them) hold remotely too — except a primary key's failure,
 * which reads "UNIQUE constraint failed" like a unique index's.
 */
import { fromSqliteFailure, RunledgerError } from "@runledger/core/port";

/**
 * SQLite's own message for each kind of constraint failure, and the extended
 * code it goes with. "UNIQUE constraint failed" is also what a primary key's
 * failure says, so that one gives the code (`constraint_unique`) but keeps
 * the primary sqliteCode: the extended one cannot be told.
 */
const CONSTRAINT_KINDS: ReadonlyArray<readonly [RegExp, string, boolean]> = [
  [/FOREIGN KEY constraint failed/i, "SQLITE_CONSTRAINT_FOREIGNKEY", true],
  [/UNIQUE constraint failed/i, "SQLITE_CONSTRAINT_UNIQUE", false],
  [/NOT NULL constraint failed/i, "SQLITE_CONSTRAINT_NOTNULL", true],
  [/CHECK constraint failed/i, "SQLITE_CONSTRAINT_CHECK", true],
  [/cannot store \S+ value in \S+ column/i, "SQLITE_CONSTRAINT_DATATYPE", true],
];

/**
 * A constraint failure from the server, its kind read from the message. One
 * that matches no built-in kind carries a schema's own text: a trigger's
 * RAISE, SQLITE_CONSTRAINT_TRIGGER (core tells a stale journal guess by it).
 */
function constraintFailure(message: string, doing: string, cause: unknown): RunledgerError {
  const kind = CONSTRAINT_KINDS.find(([pattern]) => pattern.test(message));
  const extended = kind?.[1] ?? "SQLITE_CONSTRAINT_TRIGGER";
  const refined = fromSqliteFailure(extended, `${doing}: ${message}`, cause);
  return new RunledgerError(refined.code, refined.message, {
    cause,
    sqliteCode: kind === undefined || kind[2] ? extended : "SQLITE_CONSTRAINT",
  });
}

const NETWORK_CODES = new Set([
  "ECONNREFUSED",
  "ECONNRESET",
  "ENOTFOUND",
  "EAI_AGAIN",
  "ETIMEDOUT",
  "EHOSTUNREACH",
  "ENETUNREACH",
  "EPIPE",
  "UND_ERR_SOCKET",
  "UND_ERR_CONNECT_TIMEOUT",
]);

/**
 * The port's error for a failure a remote server reported, or undefined when
 * nothing remote-specific applies (the caller translates it as a local one).
 */
export function translateRemote(error: unknown, doing: string): RunledgerError | undefined {
  const fields = (error ?? {}) as { code?: unknown; cause?: unknown };
  const message = error instanceof Error ? error.message : String(error);
  const code = typeof fields.code === "string" ? fields.code : undefined;
  switch (code) {
    case "TRANSACTION_TIMEOUT":
      return transactionTimeout(doing, error);
    case "STREAM_EXPIRED":
      return new RunledgerError(
        "stream_expired",
        `${doing}: the server closed this HTTP stream after it stayed idle too long (sqld: about 10 s); ` +
          "nothing of the transaction was committed. Retry it without pausing inside it, or use a ws:// URL, whose streams do not expire",
        { cause: error },
      );
    case "SQLITE_UNKNOWN":
      // sqld's name for SQLite's generic SQLITE_ERROR.
      return fromSqliteFailure("SQLITE_ERROR", `${doing}: ${message}`, error);
    case "SQL_PARSE_ERROR":
    case "SQL_INPUT_ERROR":
      return fromSqliteFailure("SQLITE_ERROR", `${doing}: ${message}`, error);
    case "SQLITE_CONSTRAINT":
      return constraintFailure(message, doing, error);
    case "ARGS_INVALID":
      if (/too big/i.test(message))
        return fromSqliteFailure("SQLITE_TOOBIG", `${doing}: ${message}`, error);
      break;
  }
  // sqld's own refusals of a token (AUTH_HEADER_NOT_FOUND, AUTH_JWT_INVALID, …).
  if (code?.startsWith("AUTH_")) return authRefused(doing, error);
  const refusedHandshake = /Unexpected server response: (\d{3})/.exec(message);
  if (code === "HRANA_WEBSOCKET_ERROR" && refusedHandshake !== null) {
    const handshakeStatus = Number(refusedHandshake[1]);
    if (handshakeStatus === 401 || handshakeStatus === 403) return authRefused(doing, error);
    if (handshakeStatus === 404) return missingNamespace(doing, error);
  }
  if (code === "HRANA_WEBSOCKET_ERROR" && /closed with code/.test(message)) {
    return new RunledgerError(
      "connection_lost",
      `${doing}: the server closed the connection (it restarted, or evicted this database: sqld keeps ` +
        "--max-active-namespaces databases open, default 100); an open transaction was not committed (one whose " +
        "COMMIT was in flight is commit_unknown instead). Retry once the server is back: the same lease works again",
      { cause: error },
    );
  }
  if (isUnknownBaton(error)) {
    // The stream's baton names state the server no longer holds: it restarted since.
    return new RunledgerError(
      "connection_lost",
      `${doing}: the server no longer knows this HTTP stream (it restarted since the stream began); ` +
        "an open transaction was not committed on it. Retry once the server is back: the same lease works again",
      { cause: error },
    );
  }
  const status = httpStatus(error);
  if (status === 401) return authRefused(doing, error);
  if (status === 403) return readOnlyToken(doing, error);
  if (status === 404) return missingNamespace(doing, error);
  if (isNetworkFailure(error)) return unreachable(doing, error);
  return undefined;
}

export function transactionTimeout(doing: string, cause: unknown): RunledgerError {
  return new RunledgerError(
    "transaction_timeout",
    `${doing}: the server took this transaction's write lock away (sqld does after 5 s while another writer waits); ` +
      "none of its statements were committed. Retry the transaction, and keep transactions short (no slow work between their statements)",
    { cause },
  );
}

export function authRefused(doing: string, cause: unknown): RunledgerError {
  return new RunledgerError(
    "auth_refused",
    `${doing}: the server refused the credentials; pass a valid token as libsqlDriver({ authToken }) ` +
      "(a JWT signed by the key sqld was started with, --auth-jwt-key-file)",
    { cause },
  );
}

/**
 * The admin API refused the request: its credential is the admin key
 * (sqld's `--admin-auth-key`), not the database's authToken.
 */
export function adminAuthRefused(doing: string, keyGiven: boolean, cause: unknown): RunledgerError {
  return new RunledgerError(
    "auth_refused",
    `${doing}: the admin API refused ${keyGiven ? "the admin key" : "the request, which carried no admin key"}; ` +
      "pass the key the server was started with (sqld's --admin-auth-key) as libsqlDriver({ adminAuthKey })",
    { cause },
  );
}

/**
 * sqld answers a statement it will not run under the token with 403 (over
 * WebSocket it closes the socket; the driver asks over HTTP why): a read-only
 * JWT (`"a": "ro"`) reads, and refuses every write and every PRAGMA.
 */
export function readOnlyToken(doing: string, cause: unknown): RunledgerError {
  return new RunledgerError(
    "read_only",
    `${doing}: the server refused a write under this token (HTTP 403): the token is read-only (a JWT whose "a" claim is "ro"). ` +
      "Open with { readOnly: true } to read, or pass a read-write token as libsqlDriver({ authToken }) to write",
    { cause, details: { token: "read-only" } },
  );
}

export function unreachable(doing: string, cause: unknown): RunledgerError {
  return new RunledgerError(
    "server_unreachable",
    `${doing}: cannot reach the libSQL server; check that it runs and that the URL's host and port are right, then retry`,
    { cause },
  );
}

/** The HTTP status a client error reports, if it is one. */
export function httpStatus(error: unknown): number | undefined {
  for (let e = error, depth = 0; e !== undefined && e !== null && depth < 5; depth++) {
    const status = (e as { status?: unknown }).status;
    if (typeof status === "number") return status;
    e = (e as { cause?: unknown }).cause;
  }
  const match = /HTTP status (\d{3})/.exec(error instanceof Error ? error.message : "");
  return match ? Number(match[1]) : undefined;
}

/**
 * sqld's refusal of an HTTP stream's baton it does not know (it restarted
 * since the stream began): it ran nothing of the request.
 */
export function isUnknownBaton(error: unknown): boolean {
  const message = error instanceof Error ? error.message : String(error);
  return httpStatus(error) === 400 && /invalid baton/i.test(message);
}

/** sqld answers 404 for a namespace (one database of a server started with --enable-namespaces) it does not have. */
export function missingNamespace(doing: string, cause: unknown): RunledgerError {
  return new RunledgerError(
    "cannot_open",
    `${doing}: the server has no database at this URL (no such namespace); create it, ` +
      "or open with create and give libsqlDriver({ adminUrl }) to have it created (see docs/remote.md)",
    { cause, details: { missing: "namespace" } },
  );
}

/** A connection that never reached the server: refused, reset, or a name that does not resolve. */
export function isNetworkFailure(error: unknown): boolean {
  for (let e = error, depth = 0; e !== undefined && e !== null && depth < 5; depth++) {
    const code = (e as { code?: unknown }).code;
    if (typeof code === "string" && NETWORK_CODES.has(code)) return true;
    const message = e instanceof Error ? e.message : "";
    if ([...NETWORK_CODES].some((name) => message.includes(name))) return true;
    if (e instanceof TypeError && message === "fetch failed") return true;
    // An embedded replica's client reports its server out of reach in gRPC's words.
    if (/\bstatus: Unavailable\b|tcp connect error/.test(message)) return true;
    e = (e as { cause?: unknown }).cause;
  }
  return false;
}

/**
 * A WebSocket that failed before the server answered (the client's error, or
 * one translated from it): a refused token (closed with 1006, or a 401 to
 * the handshake) and a missing namespace (1011) look like this.
 */
export function isWebSocketClosedEarly(error: unknown): boolean {
  for (let e = error, depth = 0; e !== undefined && e !== null && depth < 3; depth++) {
    const fields = e as { code?: unknown; cause?: unknown };
    if (fields.code === "HRANA_WEBSOCKET_ERROR") return true;
    e = fields.cause;
  }
  return false;
}
