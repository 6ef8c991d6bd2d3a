/**
 * Creating a database from its manifest, in one order that makes a cut-short
 * creation unmistakable: identity first, user_version last.
 */
import type { Executor } from "../port/driver.js";
import { RunledgerError } from "../port/errors.js";
import type { SchemaManifest } from "./manifest.js";

/**
 * Writes a manifest into a fresh database, inside the caller's transaction
 * (or savepoint): application_id first (unless the database is on a server
 * that refuses header writes: then the manifest's identity table names the
 * format), then every object in order, then the caller's initial rows, and
 * user_version last. Because every step is inside
 * one transaction, a failure anywhere leaves no schema and both pragmas 0;
 * and because user_version is last, a file whose creation was cut short can
 * never look finished.
 */
export async function createSchema(
  executor: ScriptExecutor,
  manifest: SchemaManifest,
  populate: () => Promise<void>,
  options: { readonly remote?: boolean } = {},
): Promise<void> {
  await createObjects(executor, manifest, populate, options);
  await finishSchema(executor, manifest);
}

/** An executor that may run a whole script in one call. */
type ScriptExecutor = Executor & { readonly executeScript?: (sql: string) => Promise<void> };

/**
 * `createSchema` up to its last write: application_id, every object and the
 * caller's rows, with user_version still 0. A creation that places many
 * databases from one built once (connection/staged-template.ts) stops here,
 * and each database adds its own rows and `finishSchema`.
 */
export async function createObjects(
  executor: ScriptExecutor,
  manifest: SchemaManifest,
  populate: () => Promise<void>,
  options: { readonly remote?: boolean } = {},
): Promise<void> {
  if (options.remote === true && manifest.identity === undefined) {
    throw new RunledgerError(
      "remote_unsupported",
      `a ${manifest.title} cannot be created on a database server yet: its format has no identity table; use a local file`,
    );
  }
  if (options.remote !== true) {
    await executor.execute(`PRAGMA application_id = ${integer(manifest.applicationId)}`);
  }
  // Every object in one script where the executor takes one (one round trip on a server).
  const statements = manifest.objects.flatMap((object) =>
    object.sql === null ? [] : [object.sql],
  );
  if (executor.executeScript !== undefined) {
    await executor.executeScript(statements.join(";\n"));
  } else {
    for (const sql of statements) await executor.execute(sql);
  }
  await populate();
}

/** `createSchema`'s last write, user_version: only now does the database look finished. */
export async function finishSchema(executor: Executor, manifest: SchemaManifest): Promise<void> {
  await executor.execute(`PRAGMA user_version = ${integer(manifest.userVersion)}`);
}

function integer(value: number): string {
  if (!Number.isSafeInteger(value)) throw new TypeError(`not an integer: ${value}`);
  return String(value);
}
