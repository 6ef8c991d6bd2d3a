/**
 * The read model, version 1 — frozen. A second database that a commit log
 * is caught up into: the documents (each live key's bytes) and the catalog
 * (each live key's digest, the sequence of the commit that wrote it, and
 * that commit's intent), plus the cursor — which log it follows and the last
 * commit applied. Recognized exactly like the other databases, under its own
 * application id — or, on a server that refuses the header, by its identity
 * table `read_model_cursor`.
 */
import { INTENTS } from "../changes/intents.js";
import { manifestDigest, type SchemaManifest } from "../schema/manifest.js";
import { autoIndex, table } from "../schema/objects.js";

/** PRAGMA application_id of every runledger read model: "RLRM" in ASCII. */
export const READ_MODEL_APPLICATION_ID = 0x524c524d;

export const READ_MODEL_SCHEMA_VERSION = 1;

const INTENT_LIST = INTENTS.map((intent) => `'${intent}'`).join(", ");

export const READ_MODEL_SCHEMA_V1: SchemaManifest = Object.freeze({
  title: "runledger read model",
  applicationId: READ_MODEL_APPLICATION_ID,
  userVersion: READ_MODEL_SCHEMA_VERSION,
  // Where the header cannot be written (a libSQL server), its one header table names the format.
  identity: "read_model_cursor",
  objects: Object.freeze([
    table(
      "read_model_cursor",
      `CREATE TABLE read_model_cursor (
  singleton INTEGER PRIMARY KEY CHECK (singleton = 1),
  log_id TEXT CHECK (log_id IS NULL OR length(log_id) BETWEEN 1 AND 128),
  applied_commit INTEGER NOT NULL CHECK (applied_commit >= 0),
  CHECK (log_id IS NOT NULL OR applied_commit = 0)
) STRICT`,
    ),
    table(
      "catalog",
      `CREATE TABLE catalog (
  partition TEXT NOT NULL,
  key TEXT NOT NULL,
  digest BLOB NOT NULL CHECK (length(digest) = 32),
  sequence INTEGER NOT NULL CHECK (sequence >= 1),
  intent TEXT NOT NULL CHECK (intent IN (${INTENT_LIST})),
  PRIMARY KEY (partition, key)
) STRICT, WITHOUT ROWID`,
    ),
    table(
      "document",
      `CREATE TABLE document (
  partition TEXT NOT NULL,
  key TEXT NOT NULL,
  data BLOB NOT NULL,
  PRIMARY KEY (partition, key)
) STRICT`,
    ),
    autoIndex("document", 1),
  ]),
});

export const READ_MODEL_SCHEMA_V1_DIGEST: string = manifestDigest(READ_MODEL_SCHEMA_V1);
