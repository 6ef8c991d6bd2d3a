/**
 * Rebuilding the catalog from the runs: every row it holds is checked
 * against its run (rewritten when they disagree, deleted when the run is
 * gone or is no run), and with a directory every run found there that the
 * catalog lacks is added. The runs are the truth; this only reads them.
 *
 * Which refusals mean "no run here" is decided once, below: a missing file
 * or namespace, a file that is no SQLite database, another program's
 * database, or a run whose creation never finished. A run that is here but
 * cannot be read as it is (newer version, damage) keeps its row and is
 * reported as skipped; an error that says nothing of the run (busy, I/O)
 * ends the reconcile with that error, the rows done so far kept.
 */
import { isRunledgerError } from "../../port/errors.js";
import type { RunCatalog } from "./catalog.js";
import type { ReconcileReport, RunEntry } from "./types.js";

/** What reconcile needs of the store: a run's entry, read without writing to it, and a directory's files. */
export interface RunSource {
  /** Reads the run at `location` read-only; refused with the open's own code. */
  entryOf(location: string): Promise<RunEntry>;
  /** The canonical locations of every file in `directory` that may be a run. */
  candidates(directory: string): Promise<string[]>;
}

const NO_RUN_CODES = new Set([
  "not_found",
  "not_a_database",
  "foreign_database",
  "partial_initialization",
]);

/** Whether an open's refusal says there is no run at its location (so a catalog row for it is wrong). */
export function meansNoRun(error: unknown): boolean {
  if (!isRunledgerError(error)) return false;
  return (
    NO_RUN_CODES.has(error.code) ||
    (error.code === "cannot_open" && error.details?.missing !== undefined)
  );
}

export async function reconcileCatalog(
  catalog: RunCatalog,
  source: RunSource,
  directory: string | undefined,
): Promise<ReconcileReport> {
  const listed = await catalog.locations();
  const known = new Set(listed);
  const found = directory === undefined ? [] : await source.candidates(directory);
  const fresh = found.filter((location) => !known.has(location) && location !== catalog.location);
  const report = { added: [] as string[], updated: [] as string[], removed: [] as string[] };
  const skipped: { location: string; code: string }[] = [];
  let unchanged = 0;
  for (const location of [...listed, ...fresh]) {
    let entry: RunEntry;
    try {
      entry = await source.entryOf(location);
    } catch (error) {
      if (!isRunledgerError(error)) throw error;
      const gone = meansNoRun(error);
      if (gone && known.has(location)) {
        await catalog.forget(location);
        report.removed.push(location);
      } else if (gone || UNREADABLE_RUN_CODES.has(error.code)) {
        skipped.push({ location, code: error.code });
      } else {
        throw error;
      }
      continue;
    }
    const outcome = await catalog.record(entry);
    if (outcome === "unchanged") unchanged += 1;
    else report[outcome].push(location);
  }
  return { ...report, skipped, unchanged };
}

/** Refusals that say the file is a run this build cannot read as it is: its row stays. */
const UNREADABLE_RUN_CODES = new Set([
  "unsupported_version",
  "schema_mismatch",
  "encoding_mismatch",
  "corrupt",
  "permission_denied",
]);
