/**
 * One error type for every failure a user can meet. `code` is the stable,
 * documented string to branch on (docs/errors.md lists them all); the SQLite
 * result codes say what the database answered, when it answered; `cause` is
 * the original error, kept whole.
 *
 * Adapters turn driver errors into a RunledgerError with `fromSqliteFailure`,
 * so nothing above the port ever inspects a driver's own error type.
 */
import type { RunledgerErrorCode } from "./codes.js";

export class RunledgerError<Code extends RunledgerErrorCode = RunledgerErrorCode> extends Error {
  override readonly name = "RunledgerError";
  /** Stable code, e.g. "busy", "constraint_foreign_key", "schema_mismatch" (one of `ERROR_CODES`). */
  readonly code: Code;
  /** The SQLite extended result code where there is one, else the primary, e.g. "SQLITE_CONSTRAINT_FOREIGNKEY". */
  readonly sqliteCode?: string;
  /** The SQLite primary result code, e.g. "SQLITE_CONSTRAINT". */
  readonly sqlitePrimaryCode?: string;
  /** Structured facts for programs (differences found, the offending path, …). */
  readonly details?: Readonly<Record<string, unknown>>;

  constructor(
    code: Code,
    message: string,
    options: {
      cause?: unknown;
      sqliteCode?: string;
      details?: Record<string, unknown>;
    } = {},
  ) {
    super(message, options.cause === undefined ? undefined : { cause: options.cause });
    this.code = code;
    if (options.sqliteCode !== undefined) {
      this.sqliteCode = options.sqliteCode;
      this.sqlitePrimaryCode = primaryCodeOf(options.sqliteCode);
    }
    if (options.details !== undefined) this.details = options.details;
  }
}

/**
 * Whether `error` is a RunledgerError, and (given a code) one with that code:
 * `if (isRunledgerError(e, "busy")) e.code` is typed `"busy"`.
 */
export function isRunledgerError<Code extends RunledgerErrorCode = RunledgerErrorCode>(
  error: unknown,
  code?: Code,
): error is RunledgerError<Code> {
  return error instanceof RunledgerError && (code === undefined || error.code === code);
}

/** "SQLITE_CONSTRAINT_FOREIGNKEY" → "SQLITE_CONSTRAINT"; a primary code is its own primary. */
export function primaryCodeOf(sqliteCode: string): string {
  const second = sqliteCode.indexOf("_", "SQLITE_".length);
  return second === -1 ? sqliteCode : sqliteCode.slice(0, second);
}

interface Translation {
  readonly code: RunledgerErrorCode;
  readonly advice: string;
}

/** Extended codes with a meaning of their own, checked before the primary code. */
const BY_EXTENDED: Readonly<Record<string, Translation>> = {
  SQLITE_CONSTRAINT_FOREIGNKEY: {
    code: "constraint_foreign_key",
    advice: "a row refers to a row that does not exist; write the referenced row first",
  },
  SQLITE_CONSTRAINT_UNIQUE: {
    code: "constraint_unique",
    advice: "a row with this key already exists; read it or choose another key",
  },
  SQLITE_CONSTRAINT_PRIMARYKEY: {
    code: "constraint_unique",
    advice: "a row with this key already exists; read it or choose another key",
  },
  SQLITE_CONSTRAINT_NOTNULL: {
    code: "constraint_not_null",
    advice: "a required value is missing; supply it",
  },
  SQLITE_CONSTRAINT_CHECK: {
    code: "constraint_check",
    advice: "a value breaks a CHECK rule of the schema; correct the value",
  },
  SQLITE_CONSTRAINT_DATATYPE: {
    code: "constraint_datatype",
    advice: "a value has the wrong type for a STRICT column; convert it",
  },
};

const BY_PRIMARY: Readonly<Record<string, Translation>> = {
  SQLITE_BUSY: {
    code: "busy",
    advice: "another connection holds the lock; retry later or raise the busy timeout",
  },
  SQLITE_LOCKED: {
    code: "busy",
    advice: "a table is locked by this connection's other work; retry once it ends",
  },
  SQLITE_CONSTRAINT: {
    code: "constraint",
    advice: "the write breaks a constraint of the schema",
  },
  SQLITE_NOTADB: {
    code: "not_a_database",
    advice: "the file is not a SQLite database; check the path",
  },
  SQLITE_CORRUPT: {
    code: "corrupt",
    advice: "the database file is damaged; restore it from a copy",
  },
  SQLITE_CANTOPEN: {
    code: "cannot_open",
    advice:
      "the database cannot be opened; check that the path and its directory exist and are accessible",
  },
  SQLITE_READONLY: {
    code: "read_only",
    advice: "the database is read-only here; open it writable or check file permissions",
  },
  SQLITE_PERM: { code: "permission_denied", advice: "check file permissions" },
  SQLITE_AUTH: { code: "permission_denied", advice: "check credentials" },
  SQLITE_FULL: { code: "disk_full", advice: "free disk space and retry" },
  SQLITE_IOERR: { code: "io_error", advice: "the disk or file system failed; check it and retry" },
  SQLITE_TOOBIG: {
    code: "too_big",
    advice: "the value exceeds SQLite's size limit; store it in parts",
  },
  SQLITE_MISMATCH: { code: "type_mismatch", advice: "a value has the wrong type; convert it" },
  SQLITE_RANGE: {
    code: "sql_error",
    advice: "the statement's parameters do not match its placeholders",
  },
  SQLITE_ERROR: { code: "sql_error", advice: "the statement failed; check its SQL" },
  SQLITE_INTERRUPT: { code: "interrupted", advice: "the statement was interrupted; retry it" },
  SQLITE_NOMEM: { code: "out_of_memory", advice: "SQLite ran out of memory" },
  SQLITE_PROTOCOL: { code: "busy", advice: "a locking race with another connection; retry" },
  SQLITE_SCHEMA: { code: "sql_error", advice: "the schema changed under the statement; retry it" },
};

const FALLBACK: Translation = {
  code: "storage_error",
  advice: "the database reported an unexpected failure; see the cause",
};

/**
 * Translates what a SQLite driver reported into a RunledgerError.
 * `sqliteCode` is the most precise result code string the driver gave
 * (extended where it has one); `cause` is the driver's own error.
 */
export function fromSqliteFailure(
  sqliteCode: string | undefined,
  message: string,
  cause: unknown,
  details?: Record<string, unknown>,
): RunledgerError {
  const translation =
    sqliteCode === undefined
      ? FALLBACK
      : (BY_EXTENDED[sqliteCode] ?? BY_PRIMARY[primaryCodeOf(sqliteCode)] ?? FALLBACK);
  return new RunledgerError(translation.code, `${message} (${translation.advice})`, {
    cause,
    ...(sqliteCode === undefined ? {} : { sqliteCode }),
    ...(details === undefined ? {} : { details }),
  });
}
