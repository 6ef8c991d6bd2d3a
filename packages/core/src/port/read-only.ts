/**
 * How a file-backed adapter opens a database read-only without writing
 * anything — no side file where none existed, no lock file, no header change.
 *
 * SQLite's read-only flag alone is not enough: a read-only connection to a
 * WAL-mode file creates its `-wal` and `-shm` (and leaves them behind, since
 * only a writer may delete them). So the adapter looks at the file first and
 * this decides:
 * - a rollback-journal file (or an empty one): the read-only flag; reading
 *   such a file creates nothing;
 * - a WAL file with no `-wal`, or an empty one: nobody has it open (an open
 *   WAL connection keeps its `-wal`) and the main file holds every commit,
 *   so it is opened `immutable`: no shared memory, no locks, no side file;
 * - a WAL file whose `-wal` and `-shm` both exist: someone may have it open;
 *   the read-only flag, which uses both as they are and creates nothing;
 * - a WAL file with a non-empty `-wal` but no `-shm`: commits that only a
 *   writer can fold in (reading them would create the `-shm`). Refused as
 *   `needs_recovery`, nothing written.
 * The decision is pure; the adapter gathers the facts with its runtime's file
 * calls and builds the URI SQLite reads `mode`/`immutable` from.
 */
import { RunledgerError } from "./errors.js";

/** What an adapter saw on disk before a read-only open. */
export interface ReadOnlyFacts {
  /** The main file's first bytes (at least 20 where the file has them). */
  readonly header: Uint8Array;
  /** The `-wal` file's size in bytes, or undefined when there is none. */
  readonly walBytes: number | undefined;
  /** Whether a `-shm` file exists. */
  readonly shm: boolean;
}

export type ReadOnlyPlan = "read-only" | "immutable";

const SQLITE_MAGIC = "SQLite format 3\u0000";

/** True when the header says WAL mode (file format read and write versions both 2). */
export function isWalHeader(header: Uint8Array): boolean {
  if (header.length < 20) return false;
  for (let i = 0; i < SQLITE_MAGIC.length; i++) {
    if (header[i] !== SQLITE_MAGIC.charCodeAt(i)) return false;
  }
  return header[18] === 2 && header[19] === 2;
}

/** Decides how to open `location` read-only (see the file comment). */
export function planReadOnlyOpen(location: string, facts: ReadOnlyFacts): ReadOnlyPlan {
  if (!isWalHeader(facts.header)) return "read-only";
  if (facts.walBytes === undefined || facts.walBytes === 0) return "immutable";
  if (facts.shm) return "read-only";
  throw new RunledgerError(
    "needs_recovery",
    `cannot open ${location} read-only: its -wal holds commits and its -shm is missing, ` +
      "so only a writer can fold them in; open it once without readOnly (or copy it with " +
      "both files and open the copy)",
    { details: { walBytes: facts.walBytes } },
  );
}

/**
 * A SQLite URI filename for an absolute POSIX path with `mode=ro` and,
 * for `immutable`, `immutable=1`. The path is escaped where SQLite's URI
 * parser would read it otherwise (`%`, `?`, `#`).
 */
export function readOnlyUri(path: string, plan: ReadOnlyPlan): string {
  const escaped = path.replace(/[%?#]/g, (c) => `%${c.charCodeAt(0).toString(16).toUpperCase()}`);
  return `file:${escaped}?mode=ro${plan === "immutable" ? "&immutable=1" : ""}`;
}
