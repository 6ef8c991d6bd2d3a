/**
 * What the workspace holds, counted: the columns `snapshot.counts()` reads
 * beside the journal's, in its one statement — a select list of scans, each
 * O(rows) of its table.
 */

/** Stored objects (directory nodes and files' content, or a large file's piece list), pieces of large files, pins. */
export const WORKSPACE_COUNTS = `(SELECT count(*) FROM workspace_object) AS objects,
  (SELECT count(*) FROM workspace_chunk) AS chunks,
  (SELECT count(*) FROM workspace_pin) AS pins`;
