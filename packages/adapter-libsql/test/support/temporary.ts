import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach } from "vitest";

/**
 * A new database path in a directory of its own at each call, every
 * directory removed after each test of the file that asked for them.
 */
export function temporaryDatabases(prefix: string): () => string {
  const directories: string[] = [];
  afterEach(() => {
    for (const directory of directories.splice(0)) {
      rmSync(directory, { recursive: true, force: true });
    }
  });
  return () => {
    const directory = mkdtempSync(join(tmpdir(), `runledger-libsql-${prefix}-`));
    directories.push(directory);
    return join(directory, `${prefix}.db`);
  };
}
