/**
 * Recognition decides whether an existing file may be trusted, reading only.
 * Each refusal exists for a different reason, and each has its own code so a
 * caller can tell them apart without parsing messages:
 *
 * - Format — is this file ours at all?
 *   `not_a_database`: SQLite cannot read it (garbage, another format, or a
 *   file cut short inside SQLite's 100-byte header).
 *   `foreign_database`: a valid SQLite file that another program owns
 *   (its application_id is not ours, or it has objects but no id). One
 *   exception keeps runs portable to servers that refuse header writes: a
 *   file with application_id 0 that holds the manifest's identity table,
 *   exactly, is ours (created remotely) and is checked like any other —
 *   a foreign file would have to copy our identity table to pass, and then
 *   every other object too.
 * - Version — is it a version this build understands?
 *   `partial_initialization`: our id, user_version 0 — a creation that never
 *   committed its last step. Never finished, never trusted, never repaired.
 *   `unsupported_version`: a user_version this build does not know (newer).
 * - Damage — does it hold exactly what its version promises?
 *   `schema_mismatch`: an object missing, extra (an index, trigger, view) or
 *   different; the error lists every difference.
 *   `encoding_mismatch`: the file records another content encoding than
 *   this build's (the manifest's `encoding`): written by a build with other
 *   layout constants. Its schema may match (most of the encoding is not in
 *   the SQL) — then open's singleton read finds it — or differ where the SQL
 *   names a constant — then the mismatch explains the difference, and only
 *   this refusal pays a second read, of the identity row.
 *   `corrupt`: SQLite reports damage, or a singleton row that must exist does not.
 *   A file truncated after an intact header lands here: SQLite reads it as
 *   one of its own databases and reports the missing pages as damage
 *   (SQLITE_CORRUPT), and the remedy is the one for any damage — restore a
 *   copy — not "check the path".
 *
 * A refused file is left byte-for-byte as found: recognition is one SELECT
 * (the header, the journal mode and every `sqlite_schema` row, read in one
 * snapshot), and nothing (not even the journal mode) is changed before it
 * succeeds. Cost is O(schema), never O(data).
 */
import type { Executor } from "../port/driver.js";
import { isRunledgerError, RunledgerError } from "../port/errors.js";
import type { Row } from "../port/values.js";
import type { SchemaManifest, SchemaObject } from "./manifest.js";

/** What a database holds, read from its header and sqlite_schema. */
export interface LiveSchema {
  readonly applicationId: number;
  readonly userVersion: number;
  /** The journal mode the file is in ("delete", "wal", …), lower case. */
  readonly journalMode: string;
  readonly objects: readonly SchemaObject[];
}

/**
 * Either outcome carries the file's journal mode, which lets `configure` skip
 * switching to WAL a file already in it. Creating a fresh file's schema does
 * not change its journal mode, so the mode read here still holds after it.
 */
export type Recognition =
  /**
   * No run content yet: a 0-byte file, or pragmas 0 and no objects. `empty`
   * tells the two apart: true for a file with no pages, false for a SQLite
   * database that simply holds no tables.
   */
  | { readonly kind: "fresh"; readonly journalMode: string; readonly empty: boolean }
  /** Exactly the manifest. Singleton rows are the caller's next check. */
  | { readonly kind: "recognized"; readonly journalMode: string };

export interface SchemaDifference {
  readonly change: "missing" | "extra" | "different";
  readonly type: string;
  readonly name: string;
  readonly expected?: string | null;
  readonly found?: string | null;
}

/**
 * The header pragmas, the journal mode and every schema object in one
 * statement: one snapshot, one statement to prepare, and as few values as
 * the answer needs (drivers pay per value). The first row (position 0) is the
 * header: application_id, user_version and journal_mode in the type, name
 * and tbl_name columns. Every other row is an object, its position its rowid.
 * They are put in rowid order here: an ORDER BY would make SQLite sort them.
 */
const LIVE_SCHEMA = `SELECT 0 AS position, a.application_id AS type, u.user_version AS name,
  j.journal_mode AS tbl_name, NULL AS sql
FROM pragma_application_id AS a, pragma_user_version AS u, pragma_journal_mode AS j
UNION ALL SELECT rowid, type, name, tbl_name, sql FROM sqlite_schema`;

export async function readLiveSchema(executor: Executor): Promise<LiveSchema> {
  const { rows } = await executor.execute(LIVE_SCHEMA);
  let header: Row | undefined;
  const placed: { position: number; object: SchemaObject }[] = [];
  let ordered = true;
  for (const row of rows) {
    const position = Number(row.position);
    if (position === 0) {
      header = row;
      continue;
    }
    if (placed.length > 0 && position < (placed.at(-1) as { position: number }).position) {
      ordered = false;
    }
    placed.push({
      position,
      object: {
        type: row.type as SchemaObject["type"],
        name: String(row.name),
        tableName: String(row.tbl_name),
        sql: row.sql === null ? null : String(row.sql),
      },
    });
  }
  if (!ordered) placed.sort((a, b) => a.position - b.position);
  return {
    applicationId: Number(header?.type ?? 0),
    userVersion: Number(header?.name ?? 0),
    journalMode: String(header?.tbl_name ?? "").toLowerCase(),
    objects: placed.map((entry) => entry.object),
  };
}

/**
 * Reads and classifies. Throws a RunledgerError with one of the codes above
 * for anything but a fresh database or an exact match.
 */
export async function recognize(
  executor: Executor,
  manifest: SchemaManifest,
  location: string,
): Promise<Recognition> {
  let live: LiveSchema;
  try {
    live = await readLiveSchema(executor);
  } catch (error) {
    throw asDamage(error, manifest, location);
  }
  let found: Recognition;
  try {
    found = classify(live, manifest, location);
  } catch (error) {
    throw await explainedByEncoding(executor, manifest, location, error);
  }
  if (found.kind !== "fresh") return found;
  // Only a fresh file pays this second read: is it empty, or a database with no tables?
  const { rows } = await executor.execute("SELECT page_count FROM pragma_page_count");
  return { ...found, empty: Number(rows[0]?.page_count ?? 0) === 0 };
}

/**
 * A schema that differs from the manifest's, in a file whose identity row
 * records another encoding: the encoding is the reason, and the refusal
 * says so (with the schema differences as its cause). Any other refusal, or
 * an identity row that cannot be read, stays as it was.
 */
async function explainedByEncoding(
  executor: Executor,
  manifest: SchemaManifest,
  location: string,
  error: unknown,
): Promise<unknown> {
  if (!isRunledgerError(error, "schema_mismatch")) return error;
  if (manifest.encoding === undefined || manifest.identity === undefined) return error;
  let recorded: unknown;
  try {
    const { rows } = await executor.execute(`SELECT encoding FROM "${manifest.identity}" LIMIT 1`);
    recorded = rows[0]?.encoding;
  } catch {
    return error;
  }
  if (typeof recorded !== "string" || recorded === manifest.encoding) return error;
  return encodingMismatch(manifest, location, recorded, error);
}

/** A file written in another content encoding than this build's. */
export function encodingMismatch(
  manifest: SchemaManifest,
  location: string,
  found: string,
  cause?: unknown,
): RunledgerError {
  const expected = manifest.encoding ?? "";
  return new RunledgerError(
    "encoding_mismatch",
    `cannot open ${location} as a ${manifest.title}: it was written in encoding "${found}" ` +
      `and this build reads and writes encoding "${expected}". The file was not changed; ` +
      "open it with the runledger build that wrote it",
    { details: { found, expected }, ...(cause === undefined ? {} : { cause }) },
  );
}

/** How a fresh file is described when it was expected to hold something. */
export function describeFresh(found: { readonly empty: boolean }): string {
  return found.empty
    ? "the file is empty"
    : "it is a SQLite database with no tables (no run, datastore or commit log was ever created in it)";
}

export function classify(
  live: LiveSchema,
  manifest: SchemaManifest,
  location: string,
): Recognition {
  const what = `${location} as a ${manifest.title}`;
  if (live.applicationId === 0 && live.userVersion === 0 && live.objects.length === 0) {
    return { kind: "fresh", journalMode: live.journalMode, empty: true };
  }
  if (live.applicationId !== manifest.applicationId && !ownedWithoutHeader(live, manifest)) {
    throw new RunledgerError(
      "foreign_database",
      `cannot open ${what}: it is a SQLite database of another program ` +
        `(application_id ${live.applicationId}, expected ${manifest.applicationId}); check the path`,
      { details: { applicationId: live.applicationId } },
    );
  }
  if (live.userVersion === 0) {
    throw new RunledgerError(
      "partial_initialization",
      `cannot open ${what}: its creation never completed (user_version 0); ` +
        "it holds no run. Delete it and create the run again",
      { details: { objects: live.objects.length } },
    );
  }
  if (live.userVersion !== manifest.userVersion) {
    throw new RunledgerError(
      "unsupported_version",
      `cannot open ${what}: it is version ${live.userVersion} and this build reads ` +
        `version ${manifest.userVersion}; use a runledger release that reads it`,
      { details: { userVersion: live.userVersion } },
    );
  }
  const differences = compareObjects(manifest.objects, live.objects);
  if (differences.length > 0) {
    throw new RunledgerError(
      "schema_mismatch",
      `cannot open ${what}: its schema differs from version ${manifest.userVersion} in ` +
        `${differences.length} place(s): ${differences.map(describe).join("; ")}. ` +
        "The file was not changed; it is not a database this build wrote",
      { details: { differences } },
    );
  }
  return { kind: "recognized", journalMode: live.journalMode };
}

/** Application id 0 and the manifest's identity table, exactly: a file created where the header could not be written. */
function ownedWithoutHeader(live: LiveSchema, manifest: SchemaManifest): boolean {
  if (live.applicationId !== 0 || manifest.identity === undefined) return false;
  const identity = manifest.objects.find((object) => object.name === manifest.identity);
  return live.objects.some(
    (object) =>
      object.type === "table" && object.name === manifest.identity && object.sql === identity?.sql,
  );
}

/** Every object missing, extra or different, by (type, name). */
export function compareObjects(
  expected: readonly SchemaObject[],
  found: readonly SchemaObject[],
): SchemaDifference[] {
  if (sameInOrder(expected, found)) return [];
  const key = (object: SchemaObject) => `${object.type}\u0000${object.name}`;
  const foundByKey = new Map(found.map((object) => [key(object), object]));
  const expectedKeys = new Set(expected.map(key));
  const differences: SchemaDifference[] = [];
  for (const object of expected) {
    const live = foundByKey.get(key(object));
    if (live === undefined) {
      differences.push({ change: "missing", type: object.type, name: object.name });
    } else if (live.sql !== object.sql || live.tableName !== object.tableName) {
      differences.push({
        change: "different",
        type: object.type,
        name: object.name,
        expected: object.sql,
        found: live.sql,
      });
    }
  }
  for (const object of found) {
    if (!expectedKeys.has(key(object))) {
      differences.push({
        change: "extra",
        type: object.type,
        name: object.name,
        found: object.sql,
      });
    }
  }
  if (differences.length === 0 && found.some((object, i) => key(object) !== key(expected[i]!))) {
    differences.push({ change: "different", type: "schema", name: "object order" });
  }
  return differences;
}

/** The usual case, checked without building any map: every object equal, in order. */
function sameInOrder(expected: readonly SchemaObject[], found: readonly SchemaObject[]): boolean {
  if (expected.length !== found.length) return false;
  for (let i = 0; i < expected.length; i++) {
    const a = expected[i] as SchemaObject;
    const b = found[i] as SchemaObject;
    if (a.type !== b.type || a.name !== b.name || a.tableName !== b.tableName || a.sql !== b.sql) {
      return false;
    }
  }
  return true;
}

function describe(difference: SchemaDifference): string {
  return `${difference.change} ${difference.type} ${difference.name}`;
}

/** A read that SQLite itself refused says the file is not (or no longer) a database. */
export function asDamage(error: unknown, manifest: SchemaManifest, location: string): unknown {
  if (isRunledgerError(error, "not_a_database")) {
    return new RunledgerError(
      "not_a_database",
      `cannot open ${location} as a ${manifest.title}: SQLite cannot read it as a database ` +
        "(garbage, truncated, or another format); check the path",
      { cause: error, ...(error.sqliteCode ? { sqliteCode: error.sqliteCode } : {}) },
    );
  }
  if (isRunledgerError(error, "corrupt")) {
    return new RunledgerError(
      "corrupt",
      `cannot open ${location} as a ${manifest.title}: SQLite reports it damaged; ` +
        "restore it from a copy",
      { cause: error, ...(error.sqliteCode ? { sqliteCode: error.sqliteCode } : {}) },
    );
  }
  return error;
}
