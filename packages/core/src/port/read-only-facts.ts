/**
 * Gathers the facts port/read-only.ts decides from, once for every
 * file-backed adapter (each used to carry its own copy). Core may not import
 * a runtime's file module, so the adapter hands in the four synchronous calls
 * this takes; Node's `node:fs` has them with these names and shapes.
 */
import type { ReadOnlyFacts } from "./read-only.js";

/** The synchronous file calls `readOnlyFacts` makes; each may throw where nothing is there. */
export interface SyncFileReads {
  openSync(path: string, flags: "r"): number;
  readSync(fd: number, into: Uint8Array, offset: number, length: number, position: number): number;
  closeSync(fd: number): void;
  statSync(path: string): { readonly size: number };
}

/** How many header bytes are read: SQLite's whole database header. */
const HEADER_BYTES = 100;

/**
 * What is on disk at `path` before a read-only open: the main file's header
 * (empty when it cannot be read: SQLite then refuses the open in its own
 * words), the `-wal` file's size and whether a `-shm` exists. Only reads;
 * nothing is created.
 *
 * @example
 * // In an adapter, `fs` being Node's file module:
 * const plan = planReadOnlyOpen(path, readOnlyFacts(path, fs));
 */
export function readOnlyFacts(path: string, fs: SyncFileReads): ReadOnlyFacts {
  const header = new Uint8Array(HEADER_BYTES);
  let length = 0;
  try {
    const fd = fs.openSync(path, "r");
    try {
      length = fs.readSync(fd, header, 0, HEADER_BYTES, 0);
    } finally {
      fs.closeSync(fd);
    }
  } catch {
    // A file that cannot be read is SQLite's to refuse.
  }
  const sizeOf = (file: string): number | undefined => {
    try {
      return fs.statSync(file).size;
    } catch {
      return undefined;
    }
  };
  return {
    header: header.subarray(0, length),
    walBytes: sizeOf(`${path}-wal`),
    shm: sizeOf(`${path}-shm`) !== undefined,
  };
}
