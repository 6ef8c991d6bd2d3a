/**
 * The two adapters the saver is tested on, each with a fresh temporary
 * directory: adapter-node (better-sqlite3) and adapter-libsql on a local file.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { libsqlDriver } from "@runledger/adapter-libsql";
import { nodeDriver } from "@runledger/adapter-node";
import type { Driver } from "@runledger/core/port";

export interface Backend {
  readonly name: string;
  driver(): Driver;
}

export const BACKENDS: readonly Backend[] = [
  { name: "adapter-node", driver: () => nodeDriver() },
  { name: "adapter-libsql", driver: () => libsqlDriver() },
];

/** A new empty directory under the system's temp dir, and its removal. */
export function tempDirectory(prefix = "runledger-langgraph-"): {
  path: string;
  remove(): void;
} {
  const path = mkdtempSync(join(tmpdir(), prefix));
  return { path, remove: () => rmSync(path, { recursive: true, force: true }) };
}
