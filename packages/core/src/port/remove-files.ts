/**
 * Deleting one SQLite database from a local disk, in the one order that
 * never leaves it half-deleted: its side files first — the rollback journal,
 * the write-ahead log, the shared-memory index — and the database file last.
 * Core asks for this only after it has switched the file out of WAL (which
 * folds the log into the file and removes it) while holding the write lock,
 * so no side file holds anything the file needs: a kill at any point leaves
 * the run intact, or gone. The other order could leave a write-ahead log
 * behind with no file, which SQLite would replay into a new database created
 * at the same path.
 */

/** The paths of a database's files, in the order they are deleted. */
export function databaseFiles(path: string): readonly string[] {
  return [`${path}-journal`, `${path}-wal`, `${path}-shm`, path];
}

/**
 * Deletes the database at `path` through `remove` (which must delete one
 * file, and do nothing when there is none), side files first.
 */
export function removeDatabaseFiles(path: string, remove: (file: string) => void): void {
  for (const file of databaseFiles(path)) remove(file);
}
