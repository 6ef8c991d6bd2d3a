/**
 * Listing the files of a directory that may be databases, for
 * `store.reconcile({ directory })`, shared by every file-backed adapter.
 * Core may not read a directory itself, so the adapter hands in the one call
 * that does; which names are left out, and what a missing directory is, is
 * decided here once.
 *
 * Left out: a database's side files (its rollback journal, write-ahead log
 * and shared-memory index — the names `databaseFiles` deletes beside it),
 * a database being created whole (`stagingPath`), and every entry that is
 * not a regular file. The rest are only candidates:
 * the caller opens each and learns from its refusal what is no run.
 */

import { fromSqliteFailure } from "./errors.js";
import { canonicalFilePath, type FileSystemProbe, resolvePosix } from "./files.js";
import { databaseFiles } from "./remove-files.js";
import { isStagingFile } from "./staged-file.js";

/** The side files' suffixes: `databaseFiles` names each beside the database, the database last. */
const SIDE_SUFFIXES = databaseFiles("").filter((suffix) => suffix !== "");

/** Whether a file name is one of a database's side files. */
export function isSideFile(name: string): boolean {
  return SIDE_SUFFIXES.some((suffix) => name.endsWith(suffix) && name.length > suffix.length);
}

/** One entry of a directory, as node:fs's `readdirSync(path, { withFileTypes: true })` answers it. */
export interface DirectoryEntry {
  readonly name: string;
  isFile(): boolean;
}

/**
 * The canonical paths of the regular files in `directory` that are no side
 * file, sorted by name. A missing directory is `cannot_open` with
 * `{ missing: "directory" }`.
 */
export async function listDatabaseFiles(
  directory: string,
  readdir: (path: string) => readonly DirectoryEntry[],
  fs: FileSystemProbe,
): Promise<string[]> {
  const path = resolvePosix(fs.cwd(), directory);
  if ((await fs.kind(path)) !== "directory") {
    throw fromSqliteFailure(
      "SQLITE_CANTOPEN",
      `cannot list the runs in ${directory}: it is no directory; pass the directory that holds the run files`,
      undefined,
      { missing: "directory" },
    );
  }
  const names = readdir(path)
    .filter((entry) => entry.isFile() && !isSideFile(entry.name) && !isStagingFile(entry.name))
    .map((entry) => entry.name)
    .sort();
  return Promise.all(names.map((name) => canonicalFilePath(`${path}/${name}`, fs)));
}
