/**
 * The datastore, version 1 — frozen. A documents database: each document is
 * a path, its bytes and their SHA-256; the route-1 sync signals a format-2
 * write records; the datastore's identity row; and at most one format
 * marker. Recognized exactly like the other databases (schema/recognize),
 * under its own application id — or, on a server that refuses the header,
 * by its identity table `datastore_info`. Changing anything here is a new
 * version.
 */
import { manifestDigest, type SchemaManifest } from "../../schema/manifest.js";
import { table } from "../../schema/objects.js";

/** PRAGMA application_id of every runledger datastore: "RLDS" in ASCII. */
export const DATASTORE_APPLICATION_ID = 0x524c4453;

export const DATASTORE_SCHEMA_VERSION = 1;

export const DATASTORE_SCHEMA_V1: SchemaManifest = Object.freeze({
  title: "runledger datastore",
  applicationId: DATASTORE_APPLICATION_ID,
  userVersion: DATASTORE_SCHEMA_VERSION,
  // Where the header cannot be written (a libSQL server), its one header table names the format.
  identity: "datastore_info",
  objects: Object.freeze([
    table(
      "datastore_info",
      `CREATE TABLE datastore_info (
  singleton INTEGER PRIMARY KEY CHECK (singleton = 1),
  datastore_id TEXT NOT NULL CHECK (length(datastore_id) BETWEEN 1 AND 128),
  created_at INTEGER NOT NULL
) STRICT`,
    ),
    table(
      "format_marker",
      `CREATE TABLE format_marker (
  singleton INTEGER PRIMARY KEY CHECK (singleton = 1),
  marker TEXT NOT NULL
) STRICT`,
    ),
    table(
      "document",
      `CREATE TABLE document (
  path TEXT NOT NULL,
  data BLOB NOT NULL,
  digest BLOB NOT NULL CHECK (length(digest) = 32),
  PRIMARY KEY (path)
) STRICT`,
    ),
    {
      type: "index" as const,
      name: "sqlite_autoindex_document_1",
      tableName: "document",
      sql: null,
    },
    table(
      "sync_change",
      `CREATE TABLE sync_change (
  sequence INTEGER PRIMARY KEY,
  path TEXT NOT NULL,
  change TEXT NOT NULL CHECK (change IN ('write', 'delete'))
) STRICT`,
    ),
  ]),
});

export const DATASTORE_SCHEMA_V1_DIGEST: string = manifestDigest(DATASTORE_SCHEMA_V1);
