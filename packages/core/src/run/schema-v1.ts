/**
 * The run database, version 1 — frozen.
 *
 * Why each refusal exists is explained in ../schema/recognize.ts; here is
 * what a version-1 file holds, exactly. SQLite itself keeps the invariants
 * (STRICT tables, CHECK constraints, foreign keys, triggers), so a bug above
 * cannot store a run that breaks them:
 * - exactly one run row, whose stop reason has one of three shapes: none;
 *   host + code; or a journal event reference;
 * - a gap-free, append-only journal; every event records the workspace root
 *   that was current when it was written;
 * - a content-addressed workspace: blobs, each an ordered list of
 *   content-addressed chunks (so a large file is written and read one chunk
 *   at a time, and equal chunks are stored once), trees, roots (format 1),
 *   named pins that retain roots, and exactly one current root.
 *
 * Any change here moves SCHEMA_V1_DIGEST, and the conformance suite with it.
 * The SQL strings are exactly what SQLite stores in sqlite_schema.sql.
 */
import { manifestDigest, type SchemaManifest } from "../schema/manifest.js";
import { autoIndex, index, table, trigger } from "../schema/objects.js";

/** PRAGMA application_id of every runledger run database: "RLDG" in ASCII. */
export const APPLICATION_ID = 0x524c4447;

/** The run database format this build reads and writes. */
export const RUN_SCHEMA_VERSION = 1;

/** The size blobs are cut into when written. Readers follow each blob's own chunk list. */
export const CHUNK_SIZE = 256 * 1024;

const RUN_STATUSES = "'running', 'suspended', 'interrupted', 'completed', 'failed', 'cancelled'";

export const SCHEMA_V1: SchemaManifest = Object.freeze({
  title: "runledger run database",
  applicationId: APPLICATION_ID,
  userVersion: RUN_SCHEMA_VERSION,
  objects: Object.freeze([
    table(
      "run",
      `CREATE TABLE run (
  singleton INTEGER PRIMARY KEY CHECK (singleton = 1),
  workflow_id TEXT NOT NULL CHECK (length(workflow_id) BETWEEN 1 AND 256),
  run_id TEXT NOT NULL CHECK (length(run_id) BETWEEN 1 AND 256),
  definition TEXT CHECK (definition IS NULL OR json_valid(definition)),
  status TEXT NOT NULL CHECK (status IN (${RUN_STATUSES})),
  stop_host TEXT CHECK (stop_host IS NULL OR length(stop_host) BETWEEN 1 AND 256),
  stop_code TEXT CHECK (stop_code IS NULL OR length(stop_code) BETWEEN 1 AND 256),
  stop_event INTEGER REFERENCES journal (sequence),
  created_at INTEGER NOT NULL,
  updated_at INTEGER NOT NULL,
  CHECK ((stop_host IS NULL AND stop_code IS NULL AND stop_event IS NULL)
    OR (stop_host IS NOT NULL AND stop_code IS NOT NULL AND stop_event IS NULL)
    OR (stop_host IS NULL AND stop_code IS NULL AND stop_event IS NOT NULL)),
  CHECK (status <> 'running' OR (stop_host IS NULL AND stop_event IS NULL))
) STRICT`,
    ),
    table(
      "workspace_blob",
      `CREATE TABLE workspace_blob (
  digest BLOB PRIMARY KEY CHECK (length(digest) = 32),
  size INTEGER NOT NULL CHECK (size >= 0),
  chunk_count INTEGER NOT NULL CHECK (chunk_count >= 0)
) STRICT, WITHOUT ROWID`,
    ),
    table(
      "workspace_chunk",
      `CREATE TABLE workspace_chunk (
  chunk_digest BLOB PRIMARY KEY CHECK (length(chunk_digest) = 32),
  data BLOB NOT NULL CHECK (length(data) > 0)
) STRICT`,
    ),
    autoIndex("workspace_chunk", 1),
    table(
      "workspace_blob_chunk",
      `CREATE TABLE workspace_blob_chunk (
  digest BLOB NOT NULL REFERENCES workspace_blob (digest) ON DELETE CASCADE,
  ordinal INTEGER NOT NULL CHECK (ordinal >= 0),
  chunk_digest BLOB NOT NULL REFERENCES workspace_chunk (chunk_digest),
  PRIMARY KEY (digest, ordinal)
) STRICT, WITHOUT ROWID`,
    ),
    index(
      "workspace_blob_chunk_by_chunk",
      "workspace_blob_chunk",
      "CREATE INDEX workspace_blob_chunk_by_chunk ON workspace_blob_chunk (chunk_digest)",
    ),
    table(
      "workspace_tree",
      `CREATE TABLE workspace_tree (
  tree_id BLOB PRIMARY KEY CHECK (length(tree_id) = 32),
  entry_count INTEGER NOT NULL CHECK (entry_count >= 0)
) STRICT, WITHOUT ROWID`,
    ),
    table(
      "workspace_tree_entry",
      `CREATE TABLE workspace_tree_entry (
  tree_id BLOB NOT NULL REFERENCES workspace_tree (tree_id) ON DELETE CASCADE,
  name TEXT NOT NULL CHECK (length(name) BETWEEN 1 AND 255),
  kind TEXT NOT NULL CHECK (kind IN ('file', 'directory')),
  blob_digest BLOB REFERENCES workspace_blob (digest),
  subtree_id BLOB REFERENCES workspace_tree (tree_id),
  PRIMARY KEY (tree_id, name),
  CHECK ((kind = 'file' AND blob_digest IS NOT NULL AND subtree_id IS NULL)
    OR (kind = 'directory' AND subtree_id IS NOT NULL AND blob_digest IS NULL))
) STRICT, WITHOUT ROWID`,
    ),
    index(
      "workspace_tree_entry_by_blob",
      "workspace_tree_entry",
      "CREATE INDEX workspace_tree_entry_by_blob ON workspace_tree_entry (blob_digest) WHERE blob_digest IS NOT NULL",
    ),
    index(
      "workspace_tree_entry_by_subtree",
      "workspace_tree_entry",
      "CREATE INDEX workspace_tree_entry_by_subtree ON workspace_tree_entry (subtree_id) WHERE subtree_id IS NOT NULL",
    ),
    table(
      "workspace_root",
      `CREATE TABLE workspace_root (
  root_id BLOB PRIMARY KEY CHECK (length(root_id) = 32),
  format INTEGER NOT NULL CHECK (format = 1),
  tree_id BLOB NOT NULL REFERENCES workspace_tree (tree_id),
  created_at INTEGER NOT NULL
) STRICT, WITHOUT ROWID`,
    ),
    index(
      "workspace_root_by_tree",
      "workspace_root",
      "CREATE INDEX workspace_root_by_tree ON workspace_root (tree_id)",
    ),
    table(
      "workspace_current",
      `CREATE TABLE workspace_current (
  singleton INTEGER PRIMARY KEY CHECK (singleton = 1),
  root_id BLOB NOT NULL REFERENCES workspace_root (root_id)
) STRICT`,
    ),
    table(
      "workspace_pin",
      `CREATE TABLE workspace_pin (
  name TEXT PRIMARY KEY CHECK (length(name) BETWEEN 1 AND 256),
  root_id BLOB NOT NULL REFERENCES workspace_root (root_id),
  created_at INTEGER NOT NULL
) STRICT, WITHOUT ROWID`,
    ),
    index(
      "workspace_pin_by_root",
      "workspace_pin",
      "CREATE INDEX workspace_pin_by_root ON workspace_pin (root_id)",
    ),
    table(
      "journal",
      `CREATE TABLE journal (
  sequence INTEGER PRIMARY KEY CHECK (sequence >= 1),
  event_id TEXT NOT NULL UNIQUE CHECK (length(event_id) BETWEEN 1 AND 128),
  idempotency_key TEXT UNIQUE CHECK (idempotency_key IS NULL OR length(idempotency_key) BETWEEN 1 AND 512),
  record TEXT NOT NULL CHECK (json_valid(record) AND json_type(record) = 'object'),
  root_id BLOB NOT NULL REFERENCES workspace_root (root_id),
  written_at INTEGER NOT NULL
) STRICT`,
    ),
    autoIndex("journal", 1),
    autoIndex("journal", 2),
    index("journal_by_root", "journal", "CREATE INDEX journal_by_root ON journal (root_id)"),
    trigger(
      "journal_gap_free",
      "journal",
      `CREATE TRIGGER journal_gap_free BEFORE INSERT ON journal
WHEN NEW.sequence <> (SELECT coalesce(max(sequence), 0) + 1 FROM journal)
BEGIN SELECT RAISE(ABORT, 'journal sequence must be gap-free'); END`,
    ),
    trigger(
      "journal_immutable",
      "journal",
      `CREATE TRIGGER journal_immutable BEFORE UPDATE ON journal
BEGIN SELECT RAISE(ABORT, 'journal events are immutable'); END`,
    ),
    // The run lifecycle (docs/contracts.md), kept by SQLite: events are
    // written only while the run is running, a terminal status is final, and
    // a suspended or interrupted run either resumes or ends.
    trigger(
      "journal_run_running",
      "journal",
      `CREATE TRIGGER journal_run_running BEFORE INSERT ON journal
WHEN (SELECT status FROM run WHERE singleton = 1) IS NOT 'running'
BEGIN SELECT RAISE(ABORT, 'run lifecycle: events are appended only while the run is running'); END`,
    ),
    trigger(
      "run_status_transition",
      "run",
      `CREATE TRIGGER run_status_transition BEFORE UPDATE ON run
WHEN OLD.status IN ('completed', 'failed', 'cancelled')
  OR (OLD.status IN ('suspended', 'interrupted') AND NEW.status IN ('suspended', 'interrupted'))
BEGIN SELECT RAISE(ABORT, 'run lifecycle: this status change is not allowed'); END`,
    ),
  ]),
});

/** SHA-256 (hex) of SCHEMA_V1's canonical serialization; equal on every adapter. */
export const SCHEMA_V1_DIGEST: string = manifestDigest(SCHEMA_V1);
