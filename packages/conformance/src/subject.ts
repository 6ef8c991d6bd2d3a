import type { Driver } from "@runledger/core";

/** What an adapter hands to `describeConformance`. */
export interface ConformanceSubject {
  /** Shown in the suite's title, e.g. "adapter-node". */
  readonly name: string;
  /** Builds the driver under test. Called once per test that needs one. */
  readonly driver: () => Driver;
  /**
   * A fresh location per call that names no database yet. For file-backed
   * drivers: a path to a file that does not exist, in a directory that does.
   */
  readonly location: () => string;
  readonly capabilities?: ConformanceCapabilities;
  /**
   * How a separate Node process builds the same driver, for the families that
   * need a second process (SQLite's file locks are per process, so two
   * connections in one process cannot prove cross-process behaviour).
   * `module` is imported by a script inside this package: give a bare
   * specifier resolvable from here (a workspace or hoisted install), or an
   * absolute path or `file:` URL. `exportName` names a function that returns
   * the driver when called with no arguments.
   */
  readonly child?: ConformanceChild;
  /**
   * Other adapters, each built in its own child process (never in this one:
   * two SQLite libraries must not share a file inside one process), for the
   * cross-adapter families: a file written by one opens in the other.
   */
  readonly peers?: readonly ConformancePeer[];
}

export interface ConformanceCapabilities {
  /**
   * Locations are local files whose bytes the suite may read and write, and
   * whose directories it may create siblings and symlinks in. Default false.
   */
  readonly files?: boolean;
  /**
   * Locations are databases on a server (a libSQL server, sqld). Tests that
   * cannot hold there (pragmas with values, TEMP tables, SQLite's extended
   * result codes, a write refused inside a read) are registered as skipped
   * with the reason in their title. Default false.
   */
  readonly remote?: boolean;
}

export interface ConformanceChild {
  readonly module: string;
  readonly exportName: string;
}

/** Another adapter, built in a child process the same way as `child`. */
export interface ConformancePeer extends ConformanceChild {
  /** Shown in test titles, e.g. "adapter-libsql". */
  readonly name: string;
}
