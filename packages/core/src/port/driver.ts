/**
 * The driver interface: what an adapter implements, and nothing more. Every
 * other file of core is written against these types, never against a driver.
 */
import type { HashFunctions } from "./hash.js";
import type { Row, SqlValue } from "./values.js";

/**
 * The port: the only thing an adapter implements. Everything above it (queues,
 * transactions, savepoints, schemas, the run API) lives in core and is shared.
 *
 * Driver → DriverConnection → DriverTransaction, each async so that one port
 * fits synchronous drivers (better-sqlite3) and asynchronous ones (libSQL).
 */
export interface Driver {
  /** A short stable name, e.g. "better-sqlite3" or "libsql". */
  readonly name: string;
  /**
   * The canonical identity of a database: two spellings of one database give
   * the same string. For files, an absolute path whose directory symlinks are
   * resolved (the file itself need not exist yet); for remote databases, a
   * normalized URL.
   */
  canonicalize(location: string): Promise<string>;
  /** Opens one physical connection. Never creates a file unless `create` is true. */
  open(location: string, options: OpenOptions): Promise<DriverConnection>;
  /**
   * The runtime's async context (Node's AsyncLocalStorage, or any object with
   * the same two methods), where it has one. With it, core recognizes a
   * transaction started from inside another transaction's callback on the
   * same database, on any lease, and refuses it instead of deadlocking.
   */
  readonly asyncContext?: AsyncContext;
  /**
   * The runtime's native SHA-256, where it has one (Node's crypto). Core
   * hashes every file it stores; without this it uses its portable
   * implementation, which gives the same digests about ten times slower.
   */
  readonly hash?: HashFunctions;
  /**
   * Deletes the database at a canonical location: a local file with its side
   * files (`removeDatabaseFiles` keeps the order that never half-deletes
   * one), a server's database by its admin API. Core calls it only while it
   * holds the database's write lock and no other connection has it open.
   * Without it, `store.remove` is refused (`remove_unsupported`).
   */
  remove?(location: string): Promise<void>;
  /**
   * The canonical locations of the files in `directory` that may be
   * databases (side files left out), for `store.reconcile({ directory })`.
   * Without it, a reconcile with a directory is `listing_unsupported`.
   */
  listDatabases?(directory: string): Promise<string[]>;
  /**
   * Builds a new database away from its location, to place it there whole
   * (docs/writing-an-adapter.md, "The port, step by step", `stage`). Core
   * calls it before opening a location it was asked to create, runs the
   * schema's creating transaction on the staged connection, then
   * `publish`es it. Undefined when something is at
   * the location already, even an empty file: core then creates in place.
   * Without it, every database is created in place, by SQLite.
   */
  stage?(location: string, options: StageOptions): Promise<StagedDatabase | undefined>;
}

/** What a staged database is placed with. */
export interface StageOptions {
  /**
   * The store's durability: with "full", `publish` also syncs the directory,
   * so the new file's name is as durable as a commit; with "normal", the
   * run's first commit does that (as a creation in place leaves it).
   */
  readonly synchronous: "normal" | "full";
}

/**
 * A new database being built where no one else sees it (in memory). Its
 * statements and transactions are a connection's; closing it without
 * `publish` discards it.
 */
export interface StagedDatabase extends DriverConnection {
  /**
   * Places the database at its location, byte for byte the file creation in
   * place would leave, and closes the staged connection. False when
   * something appeared at the location meanwhile (another creator): nothing
   * there changed.
   */
  publish(): Promise<boolean>;
  /**
   * Places at `location`, as `publish` places it — byte for byte, whole or
   * not at all — this database as its connection sees it now, the writes of
   * its open transaction included; the connection stays open and its
   * transaction goes on. False when something is at `location` (nothing
   * there changed). Optional: with it, core keeps a store's staged database
   * as a template — the part of a creation every database shares, committed
   * once — and places each new database from it, in a transaction it then
   * rolls back (docs/writing-an-adapter.md, `stage`).
   */
  placeCopy?(location: string): Promise<boolean>;
}

/** The two methods of an async context store that core uses. */
export interface AsyncContext {
  run<R>(store: unknown, fn: () => R): R;
  getStore(): unknown;
}

export interface OpenOptions {
  /**
   * Create the database if it does not exist. When false a missing file is
   * `cannot_open`. Unless `readOnly`, a file (or directory) this process may
   * not write is `read_only` (as `checkFileOpenable` decides).
   */
  readonly create: boolean;
  /**
   * Refuse every write on this connection, and write nothing to open it: no
   * side file created where none existed (see `planReadOnlyOpen`). Never creates.
   */
  readonly readOnly: boolean;
  /** How long one statement waits on SQLite's locks before answering SQLITE_BUSY. */
  readonly busyTimeoutMs: number;
  /**
   * How long the caller waits out another writer in all (the store's
   * `busyTimeoutMs`). Core retries `begin` until then itself. A driver whose
   * transaction starts with its first statement (BEGIN sent along with it, so
   * a busy answer comes after `begin` returned, where core cannot retry)
   * retries that first request until this deadline. Absent: `busyTimeoutMs`.
   */
  readonly busyDeadlineMs?: number;
}

export interface QueryResult {
  /** Rows of a statement that returns data; empty for one that does not. */
  readonly rows: Row[];
  /** Rows changed by an INSERT, UPDATE or DELETE; 0 for a reader. */
  readonly changes: number;
  /** The rowid of the last insert on this connection, where the statement was a write. */
  readonly lastInsertRowid: number | bigint | undefined;
}

/**
 * Runs one statement with positional parameters. With `{ later: true }` the
 * caller reads nothing of the answer (it is a write whose success is all it
 * needs), and a driver whose round trips are costly may send the statement
 * with the next one, or with COMMIT, in order. Its failure then surfaces
 * there, and ends the transaction: the driver reports it no longer
 * `active`, so it is never committed. A driver may ignore the option.
 */
export interface Executor {
  execute(
    sql: string,
    params?: readonly SqlValue[],
    options?: { readonly later?: boolean },
  ): Promise<QueryResult>;
}

export type BeginMode = "immediate" | "deferred";

/** The connection settings core may ask for, once a file is recognized as safe to write. */
export interface ConnectionSettings {
  readonly journalMode?: "wal" | "delete";
  readonly synchronous?: "normal" | "full";
}

export interface DriverConnection extends Executor {
  /**
   * True for a connection to a database server (a libSQL server, sqld) rather
   * than a local file. Such a server refuses every PRAGMA that carries a value:
   * core then writes no `application_id` (a run's identity is its schema and
   * identity row, see docs/file-format.md) and switches no `query_only`.
   * Absent or false: a local database.
   */
  readonly remote?: boolean;
  /** Runs several statements with no parameters (DDL). */
  executeScript(sql: string): Promise<void>;
  /** Starts a transaction. Only core calls this, and only from its transaction owner. */
  begin(mode: BeginMode): Promise<DriverTransaction>;
  /**
   * `begin`, run before the call returns (its failure thrown, `busy` after
   * SQLite's busy handler gave up): offered with `executeNow` and
   * `commitNow` by a driver whose calls complete synchronously and owe
   * nothing between them (better-sqlite3). Core then begins, runs a step's
   * one statement and commits without a promise of its own, and retries a
   * busy BEGIN the ordinary way. Absent: core uses `begin`. Offer it as a
   * method of the connection's class rather than a function made for each
   * connection: core calls it from one place for every connection, and a
   * new function there makes V8 discard that place's optimized code each
   * time a process opens another database.
   */
  readonly beginNow?: (mode: BeginMode) => DriverTransaction;
  /** Applies journal mode and synchronous. Core calls it only after recognition. */
  configure(settings: ConnectionSettings): Promise<void>;
  /** Closes the connection and releases every resource it holds. Idempotent. */
  close(): Promise<void>;
}

/** A transaction session: statements run inside it until commit or rollback. */
export interface DriverTransaction extends Executor {
  /**
   * Whether the transaction is still open on the database. False after
   * `commit` or `rollback`, and also as soon as SQLite or the server has
   * ended it by itself: SQLite rolls a whole transaction back after some
   * failures (SQLITE_FULL, an I/O error, SQLITE_NOMEM), a server when the
   * connection is lost or it takes the write lock away. Read by core only
   * after a statement failed, to tell a failure that undid everything (the
   * failure keeps its own code) from a live transaction that still needs its
   * cleanup. Where the driver cannot know, say true: core then cleans up, and
   * a cleanup that fails poisons the connection. On a local connection
   * (`remote` not true) it must be exact right after each statement
   * (SQLite's autocommit state): core relies on it to run an apply whose
   * only write is one statement with no savepoint. A connection whose
   * client learns of the end only from a later answer says `remote`.
   */
  readonly active: boolean;
  /**
   * `execute`, run before the call returns: its answer returned, its failure
   * thrown as the port's error. Offered with `beginNow` and `commitNow` by a
   * driver whose calls complete synchronously (see `beginNow`). Absent: core
   * uses `execute`.
   */
  readonly executeNow?: (sql: string, params: readonly SqlValue[]) => QueryResult;
  executeScript(sql: string): Promise<void>;
  commit(): Promise<void>;
  /** `commit`, run before the call returns; offered with `executeNow` (see `beginNow`). */
  readonly commitNow?: () => void;
  /** Ends the transaction, undoing it; succeeds too when SQLite or the server already ended it. */
  rollback(): Promise<void>;
}
