/**
 * The commit log, version 1 — frozen.
 *
 * A commit log is its own SQLite database, recognized exactly like a run
 * database (../schema/recognize.ts) under its own application id — or, on a
 * server that refuses the header, by its identity table `log_info`. It holds:
 * - `log_info`: one row naming this log (a random id, so a read model can
 *   tell which log it follows) and when it was created;
 * - `log_commit`: one row per commit — one partition, one batch of a unit of
 *   work — with its txn id, batch index, per-partition gap-free sequence,
 *   intent and timestamps. `commit_id` is the log's global order (the read
 *   model's cursor); triggers keep both orders gap-free and commits immutable;
 * - `log_op`: a commit's ops in order (put → content digest; tombstone), with
 *   the expectation each carried;
 * - `live_key`: per partition, every live key → content digest and the
 *   sequence of the commit that wrote it (a tombstone removes the row);
 * - `chunk`: content addressed by SHA-256; one row per distinct content;
 * - the staging area — `unit`, `unit_batch`, `staged_op`, `staged_content` —
 *   where a unit of work spills what it stages (so a long run never holds its
 *   payloads in memory), its batch plan, and each batch's outcome. Staged
 *   contents are keyed by the unit's own counter (`ref`), not by digest, so
 *   spilling appends in key order instead of inserting at random places.
 *
 * Any change here moves COMMIT_LOG_SCHEMA_V1_DIGEST. The SQL strings are
 * exactly what SQLite stores in sqlite_schema.sql.
 */
import { INTENTS } from "../changes/intents.js";
import { manifestDigest, type SchemaManifest } from "../schema/manifest.js";
import { autoIndex, table, trigger } from "../schema/objects.js";

/** PRAGMA application_id of every runledger commit log: "RLCL" in ASCII. */
export const COMMIT_LOG_APPLICATION_ID = 0x524c434c;

/** The commit log format this build reads and writes. */
export const COMMIT_LOG_SCHEMA_VERSION = 1;

const INTENT_LIST = INTENTS.map((intent) => `'${intent}'`).join(", ");
const DIGEST = (column: string) => `length(${column}) = 32`;

export const COMMIT_LOG_SCHEMA_V1: SchemaManifest = Object.freeze({
  title: "runledger commit log",
  applicationId: COMMIT_LOG_APPLICATION_ID,
  userVersion: COMMIT_LOG_SCHEMA_VERSION,
  // Where the header cannot be written (a libSQL server), its one header table names the format.
  identity: "log_info",
  objects: Object.freeze([
    table(
      "log_info",
      `CREATE TABLE log_info (
  singleton INTEGER PRIMARY KEY CHECK (singleton = 1),
  log_id TEXT NOT NULL CHECK (length(log_id) BETWEEN 1 AND 128),
  created_at INTEGER NOT NULL
) STRICT`,
    ),
    table(
      "log_commit",
      `CREATE TABLE log_commit (
  commit_id INTEGER PRIMARY KEY CHECK (commit_id >= 1),
  txn_id TEXT NOT NULL CHECK (length(txn_id) BETWEEN 1 AND 128),
  batch INTEGER NOT NULL CHECK (batch >= 0),
  partition TEXT NOT NULL CHECK (length(partition) >= 1),
  sequence INTEGER NOT NULL CHECK (sequence >= 1),
  intent TEXT NOT NULL CHECK (intent IN (${INTENT_LIST})),
  op_count INTEGER NOT NULL CHECK (op_count BETWEEN 1 AND 10000),
  staged_at INTEGER NOT NULL,
  committed_at INTEGER NOT NULL,
  UNIQUE (txn_id, batch),
  UNIQUE (partition, sequence)
) STRICT`,
    ),
    autoIndex("log_commit", 1),
    autoIndex("log_commit", 2),
    trigger(
      "log_commit_in_order",
      "log_commit",
      `CREATE TRIGGER log_commit_in_order BEFORE INSERT ON log_commit
WHEN NEW.commit_id <> (SELECT coalesce(max(commit_id), 0) + 1 FROM log_commit)
  OR NEW.sequence <> (SELECT coalesce(max(sequence), 0) + 1 FROM log_commit WHERE partition = NEW.partition)
BEGIN SELECT RAISE(ABORT, 'commit ids and partition sequences must be gap-free'); END`,
    ),
    trigger(
      "log_commit_immutable",
      "log_commit",
      `CREATE TRIGGER log_commit_immutable BEFORE UPDATE ON log_commit
BEGIN SELECT RAISE(ABORT, 'commits are immutable'); END`,
    ),
    trigger(
      "log_commit_permanent",
      "log_commit",
      `CREATE TRIGGER log_commit_permanent BEFORE DELETE ON log_commit
BEGIN SELECT RAISE(ABORT, 'commits are permanent'); END`,
    ),
    table(
      "log_op",
      `CREATE TABLE log_op (
  commit_id INTEGER NOT NULL REFERENCES log_commit (commit_id),
  ordinal INTEGER NOT NULL CHECK (ordinal >= 0),
  kind TEXT NOT NULL CHECK (kind IN ('put', 'tombstone')),
  key TEXT NOT NULL CHECK (length(key) >= 1),
  digest BLOB CHECK (digest IS NULL OR ${DIGEST("digest")}),
  expect TEXT CHECK (expect IS NULL OR expect IN ('absent', 'present', 'sha256')),
  expect_digest BLOB CHECK (expect_digest IS NULL OR ${DIGEST("expect_digest")}),
  PRIMARY KEY (commit_id, ordinal),
  CHECK ((kind = 'put') = (digest IS NOT NULL)),
  CHECK ((expect IS 'sha256') = (expect_digest IS NOT NULL))
) STRICT, WITHOUT ROWID`,
    ),
    trigger(
      "log_op_immutable",
      "log_op",
      `CREATE TRIGGER log_op_immutable BEFORE UPDATE ON log_op
BEGIN SELECT RAISE(ABORT, 'ops are immutable'); END`,
    ),
    table(
      "live_key",
      `CREATE TABLE live_key (
  partition TEXT NOT NULL,
  key TEXT NOT NULL,
  digest BLOB NOT NULL CHECK (${DIGEST("digest")}),
  sequence INTEGER NOT NULL CHECK (sequence >= 1),
  PRIMARY KEY (partition, key)
) STRICT, WITHOUT ROWID`,
    ),
    table(
      "chunk",
      `CREATE TABLE chunk (
  digest BLOB PRIMARY KEY CHECK (${DIGEST("digest")}),
  size INTEGER NOT NULL CHECK (size = length(data)),
  data BLOB NOT NULL
) STRICT`,
    ),
    autoIndex("chunk", 1),
    table(
      "unit",
      `CREATE TABLE unit (
  txn_id TEXT PRIMARY KEY CHECK (length(txn_id) BETWEEN 1 AND 128),
  state TEXT NOT NULL CHECK (state IN ('staging', 'sealed', 'done')),
  created_at INTEGER NOT NULL,
  sealed_at INTEGER,
  done_at INTEGER
) STRICT, WITHOUT ROWID`,
    ),
    table(
      "unit_batch",
      `CREATE TABLE unit_batch (
  txn_id TEXT NOT NULL REFERENCES unit (txn_id) ON DELETE CASCADE,
  batch INTEGER NOT NULL CHECK (batch >= 0),
  partition TEXT NOT NULL CHECK (length(partition) >= 1),
  intent TEXT NOT NULL CHECK (intent IN (${INTENT_LIST})),
  run_last INTEGER NOT NULL CHECK (run_last IN (0, 1)),
  op_count INTEGER NOT NULL CHECK (op_count BETWEEN 1 AND 10000),
  expect_count INTEGER NOT NULL CHECK (expect_count BETWEEN 0 AND op_count),
  staged_at INTEGER NOT NULL,
  state TEXT NOT NULL CHECK (state IN ('staged', 'committed', 'refused', 'held')),
  outcome TEXT CHECK (outcome IS NULL OR json_valid(outcome)),
  PRIMARY KEY (txn_id, batch)
) STRICT, WITHOUT ROWID`,
    ),
    table(
      "staged_op",
      `CREATE TABLE staged_op (
  txn_id TEXT NOT NULL,
  batch INTEGER NOT NULL,
  ordinal INTEGER NOT NULL CHECK (ordinal >= 0),
  kind TEXT NOT NULL CHECK (kind IN ('put', 'tombstone')),
  key TEXT NOT NULL CHECK (length(key) >= 1),
  digest BLOB CHECK (digest IS NULL OR ${DIGEST("digest")}),
  content_ref INTEGER,
  expect TEXT CHECK (expect IS NULL OR expect IN ('absent', 'present', 'sha256')),
  expect_digest BLOB CHECK (expect_digest IS NULL OR ${DIGEST("expect_digest")}),
  PRIMARY KEY (txn_id, batch, ordinal),
  CHECK ((kind = 'put') = (digest IS NOT NULL)),
  CHECK ((kind = 'put') = (content_ref IS NOT NULL)),
  CHECK ((expect IS 'sha256') = (expect_digest IS NOT NULL))
) STRICT, WITHOUT ROWID`,
    ),
    table(
      "staged_content",
      `CREATE TABLE staged_content (
  txn_id TEXT NOT NULL,
  ref INTEGER NOT NULL CHECK (ref >= 0),
  digest BLOB NOT NULL CHECK (${DIGEST("digest")}),
  data BLOB NOT NULL,
  PRIMARY KEY (txn_id, ref)
) STRICT`,
    ),
    autoIndex("staged_content", 1),
  ]),
});

/** SHA-256 (hex) of COMMIT_LOG_SCHEMA_V1's canonical serialization; equal on every adapter. */
export const COMMIT_LOG_SCHEMA_V1_DIGEST: string = manifestDigest(COMMIT_LOG_SCHEMA_V1);
