/**
 * What a read-only open needs to know about a database file before SQLite
 * touches it (see @runledger/core's port/read-only.ts): its header, whether
 * a `-wal` exists and how large it is, and whether a `-shm` exists. Only
 * reads; nothing is created.
 */
import { closeSync, openSync, readSync, statSync } from "node:fs";
import type { ReadOnlyFacts } from "@runledger/core/port";

export function readOnlyFacts(path: string): ReadOnlyFacts {
  const header = new Uint8Array(100);
  let length = 0;
  try {
    const fd = openSync(path, "r");
    try {
      length = readSync(fd, header, 0, header.length, 0);
    } finally {
      closeSync(fd);
    }
  } catch {
    // A file that cannot be read is SQLite's to refuse.
  }
  return {
    header: header.subarray(0, length),
    walBytes: sizeOf(`${path}-wal`),
    shm: sizeOf(`${path}-shm`) !== undefined,
  };
}

function sizeOf(path: string): number | undefined {
  try {
    return statSync(path).size;
  } catch {
    return undefined;
  }
}
