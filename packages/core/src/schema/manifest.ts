/**
 * Schema manifests as data: the objects a database kind holds, frozen, and
 * the digest that pins them, so that recognition compares against a constant
 * and a schema change is visible in review.
 */
import { sha256Hex } from "../port/hash.js";

/**
 * A frozen schema manifest: the exact, ordered list of objects a database of
 * one kind holds, plus the two header fields that name its format. A database
 * is recognized only when what it holds equals its manifest exactly, so the
 * manifest is data, never derived from a live database.
 */
export interface SchemaObject {
  readonly type: "table" | "index" | "trigger" | "view";
  readonly name: string;
  readonly tableName: string;
  /** The CREATE statement exactly as SQLite stores it; null for automatic indexes. */
  readonly sql: string | null;
}

export interface SchemaManifest {
  /** What kind of database this is, for messages ("run database"). */
  readonly title: string;
  /** PRAGMA application_id: who owns the file. */
  readonly applicationId: number;
  /** PRAGMA user_version: which version of the owner's format. */
  readonly userVersion: number;
  /**
   * The manifest's identity table, where it has one: a table whose exact
   * presence names the format where the header cannot be written (a libSQL
   * server refuses `PRAGMA application_id`). A file with application_id 0
   * is recognized as this format only when it holds this table exactly.
   */
  readonly identity?: string;
  /**
   * How the content the format stores is laid out (for a run database, the
   * workspace encoding), where the format records it: the identity table's
   * `encoding` column holds it, open compares it with this build's, and the
   * digest covers it, so that a change of layout moves the digest even where
   * no SQL changes.
   */
  readonly encoding?: string;
  /** In creation order, which is also sqlite_schema's rowid order. */
  readonly objects: readonly SchemaObject[];
}

/**
 * The canonical serialization that a manifest's digest is taken over, and
 * that a live database's schema is serialized to for comparison:
 * JSON of ["runledger-schema", application_id, user_version,
 * [[type, name, tbl_name, sql], …]] with objects in sqlite_schema rowid order,
 * and the content encoding as a fifth element for a format that records one
 * (without it the serialization is the four elements, as before).
 */
export function serializeSchema(
  applicationId: number,
  userVersion: number,
  objects: readonly SchemaObject[],
  encoding?: string,
): string {
  return JSON.stringify([
    "runledger-schema",
    applicationId,
    userVersion,
    objects.map((object) => [object.type, object.name, object.tableName, object.sql]),
    ...(encoding === undefined ? [] : [encoding]),
  ]);
}

/** SHA-256 (hex) of the manifest's canonical serialization. */
export function manifestDigest(manifest: SchemaManifest): string {
  return sha256Hex(
    serializeSchema(
      manifest.applicationId,
      manifest.userVersion,
      manifest.objects,
      manifest.encoding,
    ),
  );
}
