import type { Driver } from "@runledger/core/port";

/** What an adapter hands to `describeConformance`. */
export interface ConformanceSubject {
  /** Shown in the suite's title, e.g. "adapter-node". */
  readonly name: string;
  /** Builds the driver under test. Called once per test that needs one. */
  readonly driver: () => Driver;
  /**
   * A fresh location per call that names no database yet. For file-backed
   * drivers: a path to a file that does not exist, in a directory that does
   * (`temporaryFiles()` makes such a factory).
   */
  readonly location: () => string;
  /**
   * What the backend can do. Every test that needs a capability the subject
   * does not declare is still registered, and reported as skipped with
   * "needs <capability>" in its title. Everything defaults to false.
   */
  readonly capabilities?: ConformanceCapabilities;
  /**
   * How a separate Node process builds the same driver, for the tests that
   * need a second process (SQLite's file locks are per process, so two
   * connections in one process cannot prove cross-process behaviour).
   * Required when `capabilities.childProcesses` is true.
   */
  readonly child?: ConformanceChild;
  /**
   * Other adapters, each built in its own child process (never in this one:
   * two SQLite libraries must not share a file inside one process), for the
   * cross-adapter tests: a file written by one opens in the other, and two
   * libraries on one file at once. Without peers those tests are reported as
   * skipped ("needs peers").
   */
  readonly peers?: readonly ConformancePeer[];
  /**
   * Where the bare module specifiers of `child` and `peers` are resolved
   * from: a file or directory path, or a `file:` URL, inside the adapter's
   * own package. Pass the test file's `import.meta.url`. Default: the current
   * working directory (vitest's is the package being tested).
   */
  readonly root?: string | URL;
}

/**
 * The capabilities a subject may declare. Each names something a backend may
 * lack for a real reason; the tests that depend on it are skipped with its
 * name rather than weakened. See docs/writing-an-adapter.md for which test
 * families need which.
 */
export interface ConformanceCapabilities {
  /**
   * Locations are local files whose bytes the suite may read and write, and
   * whose directories it may create siblings and symlinks in.
   */
  readonly files?: boolean;
  /**
   * The driver can be built in another Node process (`subject.child`): the
   * cross-process, lock-holder and peer tests start such processes.
   */
  readonly childProcesses?: boolean;
  /**
   * Another connection can open the database and read it while a connection
   * (in this process or another) holds a write transaction.
   */
  readonly readersDuringWrite?: boolean;
  /**
   * WAL works with shared memory (the -shm index): several connections stay
   * open on one WAL database at once, readers see a snapshot while a writer
   * commits. Without it SQLite needs EXCLUSIVE locking mode for WAL, and one
   * connection owns the file until it closes.
   */
  readonly walSharedMemory?: boolean;
  /**
   * The driver takes SQLite's standard OS file locks, which every other
   * SQLite library on the machine sees: a write through another library
   * waits for (or fails `busy` against) a lock this one holds.
   */
  readonly sharedLocks?: boolean;
  /**
   * A lock dies with the process that held it (the OS drops file locks of a
   * killed process), so the next opener proceeds within its busy timeout.
   */
  readonly crashSafeLocks?: boolean;
  /**
   * Failures carry SQLite's extended result code (SQLITE_CONSTRAINT_PRIMARYKEY,
   * SQLITE_CONSTRAINT_TRIGGER, …), not only the primary code or a message.
   */
  readonly extendedErrorCodes?: boolean;
  /**
   * The database is on a server (libSQL's sqld): no file, pragmas with values
   * refused. Tests that need a local database declare "local", which a remote
   * subject lacks.
   */
  readonly remote?: boolean;
  /**
   * When `close()` resolves, the driver has really closed the database, so
   * SQLite has removed its `-wal` and `-shm` (adapter-node). Default false:
   * a driver whose native handle closes later (adapter-libsql frees it when
   * the garbage collector finalizes its statements) still folds the WAL
   * into the database file before close resolves, but may leave an empty
   * `-wal` and the `-shm` until then.
   */
  readonly closeRemovesSideFiles?: boolean;
  /**
   * When `close()` resolves, nothing of the driver keeps the file open, so
   * the process is alone on it again (a removal, which must be alone on a
   * file, can follow at once). Default false: adapter-libsql's closed client
   * holds its native handles until the garbage collector frees them.
   */
  readonly closeReleasesFile?: boolean;
  /**
   * The driver stages (`Driver.stage`): a database it is asked to create is
   * built away from its location and placed there whole. The staged-creation
   * family proves the bytes are those of a creation in place and that a
   * failure at any step leaves nothing at the location.
   */
  readonly stagedCreation?: boolean;
  /**
   * The driver's staged databases place copies (`StagedDatabase.placeCopy`):
   * a store stages once and places every later new database from the one it
   * keeps. The staged-creation family proves a copy holds what the staged
   * database's open transaction wrote, that the transaction goes on, that an
   * occupied location is left as found, and that a store then stages once,
   * keeping that staged database open until the store closes.
   */
  readonly stagedCopies?: boolean;
  /**
   * The driver's calls complete before they return: its connections offer
   * `beginNow` and their transactions `executeNow` (and `commitNow` where
   * nothing is owed between calls), which core uses to run a step without a
   * promise of its own. The step family proves a step takes that way.
   */
  readonly callsNow?: boolean;
}

export type Capability = keyof ConformanceCapabilities;

export interface ConformanceChild {
  /**
   * The driver's module: a bare specifier (resolved from `subject.root`, so
   * the adapter's own package and its dependencies are found), an absolute
   * path, or a `file:` URL.
   */
  readonly module: string;
  /** A function export that returns the driver when called with no arguments. */
  readonly exportName: string;
}

/** Another adapter, built in a child process the same way as `child`. */
export interface ConformancePeer extends ConformanceChild {
  /** Shown in test titles, e.g. "adapter-libsql". */
  readonly name: string;
}
