/**
 * A database file's own soundness, as SQLite proves it, for any manifest:
 * `PRAGMA integrity_check`, every CHECK constraint of the manifest row by
 * row (./checks.ts; integrity_check skips them read-only) and
 * `PRAGMA foreign_key_check`. The first job of a deep check; what the
 * format's content must satisfy beyond this is its owners' to check.
 */
import type { Executor } from "../port/driver.js";
import { checkViolations } from "./checks.js";
import type { SchemaManifest } from "./manifest.js";

/** integrity_check's line for a row that breaks a CHECK (only a writable connection checks them). */
const CHECK_VERDICT = /^CHECK constraint failed in /;

/** One line per problem SQLite finds in the file; empty when it finds none. */
export async function fileProblems(reader: Executor, manifest: SchemaManifest): Promise<string[]> {
  const problems: string[] = [];
  const integrity = await reader.execute("PRAGMA integrity_check");
  // Its CHECK lines (a writable connection's only) are left to the scan below, which finds
  // each row, on every connection: so a report reads the same read-only and read-write.
  const verdicts = integrity.rows
    .map((row) => String(Object.values(row)[0]))
    .filter((line) => !CHECK_VERDICT.test(line));
  if (verdicts.length > 1 || (verdicts.length === 1 && verdicts[0] !== "ok")) {
    problems.push(...verdicts.map((line) => `integrity_check: ${line}`));
  }
  problems.push(...(await checkViolations(reader, manifest)));
  const foreign = await reader.execute("PRAGMA foreign_key_check");
  for (const row of foreign.rows) {
    problems.push(
      `foreign_key_check: ${String(row.table)} row ${String(row.rowid)} → ${String(row.parent)}`,
    );
  }
  return problems;
}
