/**
 * The run database, version 1 — frozen at the first published release.
 *
 * Why each refusal exists is explained in ../schema/recognize.ts; here is
 * what a version-1 file holds, exactly. SQLite itself keeps the invariants
 * (STRICT tables, CHECK constraints, triggers), so a bug above cannot store
 * a run that breaks them:
 * - an identity row naming the format, so that a run created where the
 *   header cannot be written (a libSQL server refuses `PRAGMA
 *   application_id`) is still recognized, and nothing else is; and the
 *   workspace encoding the file was written in (../workspace/encoding.ts),
 *   which open compares with this build's. The column has no CHECK naming
 *   the encoding: a file of another encoding must still be read far enough
 *   to be refused for what it is (`encoding_mismatch`), and the manifest's
 *   `encoding`, which the digest covers, pins it instead;
 * - exactly one run row, whose stop reason has one of three shapes: none;
 *   host + code; or a journal event reference;
 * - a gap-free, append-only journal whose events are chained by their
 *   digests (./chain.ts; the anchor row says where the oldest event kept
 *   chains from after a fork or a prune); every event records the workspace root
 *   that was current when it was written, and the newest event's root *is*
 *   the current root (the view `workspace_current`; the empty root before
 *   the first event) — so publishing a new root is one row, not two. A root
 *   of at most INLINE_NODE_MAX bytes that an apply publishes is held in the
 *   event's row itself (`root_node`, as a small directory is held in its
 *   parent's entry), and in each later event recording the same root: a step
 *   publishing a small root writes no object row and no key-index entry for
 *   it (../workspace/roots.ts);
 * - the keys of the keyed transactions that landed, each with the journal
 *   sequences its transaction appended, so a transaction retried after a
 *   lost connection lands at most once (./transaction-keys.ts);
 * - a content-addressed workspace in three tables — objects, pieces of
 *   large files, pins — whose definitions are the workspace's own
 *   (../workspace/schema-v1.ts): this manifest lists them in its order.
 *
 * What a step writes is kept to a few pages: the journal row (appended at
 * the table's end; no index on `event_id` — core makes each id unique by
 * construction, time-ordered with random bits, and `verify` reports an id
 * used twice, so steps do not pay a page a commit to have SQLite re-prove
 * it) and the workspace's new objects (see its tables).
 *
 * Any change here, or to the workspace's tables, moves SCHEMA_V1_DIGEST, and
 * the conformance suite with it.
 * The SQL strings are exactly what SQLite stores in sqlite_schema.sql.
 */
import { manifestDigest, type SchemaManifest } from "../schema/manifest.js";
import { index, table, trigger, view } from "../schema/objects.js";
import { WORKSPACE_ENCODING_V1 } from "../workspace/encoding.js";
import { INLINE_NODE_MAX } from "../workspace/node.js";
import { EMPTY_ROOT_ID } from "../workspace/node-encoding.js";
import { WORKSPACE_SCHEMA_V1 } from "../workspace/schema-v1.js";

/** PRAGMA application_id of every runledger run database: "RLDG" in ASCII. */
export const APPLICATION_ID = 0x524c4447;

/** The run database format this build reads and writes. */
export const RUN_SCHEMA_VERSION = 1;

const RUN_STATUSES = "'running', 'suspended', 'interrupted', 'completed', 'failed', 'cancelled'";

export const SCHEMA_V1: SchemaManifest = Object.freeze({
  title: "runledger run database",
  applicationId: APPLICATION_ID,
  userVersion: RUN_SCHEMA_VERSION,
  identity: "runledger_identity",
  encoding: WORKSPACE_ENCODING_V1,
  objects: Object.freeze([
    table(
      "runledger_identity",
      `CREATE TABLE runledger_identity (
  application_id INTEGER PRIMARY KEY CHECK (application_id = ${APPLICATION_ID}),
  format TEXT NOT NULL CHECK (format = 'runledger run database'),
  version INTEGER NOT NULL CHECK (version = ${RUN_SCHEMA_VERSION}),
  encoding TEXT NOT NULL CHECK (length(encoding) BETWEEN 1 AND 1024)
) STRICT`,
    ),
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
      "journal",
      `CREATE TABLE journal (
  sequence INTEGER PRIMARY KEY CHECK (sequence >= 1),
  event_id TEXT NOT NULL CHECK (length(event_id) BETWEEN 1 AND 128),
  idempotency_key TEXT CHECK (idempotency_key IS NULL OR length(idempotency_key) BETWEEN 1 AND 512),
  record TEXT NOT NULL CHECK (json_valid(record) AND json_type(record) = 'object'),
  root_id BLOB NOT NULL CHECK (length(root_id) = 32),
  root_node BLOB CHECK (root_node IS NULL OR length(root_node) BETWEEN 1 AND ${INLINE_NODE_MAX}),
  written_at INTEGER NOT NULL,
  digest BLOB NOT NULL CHECK (length(digest) = 32)
) STRICT`,
    ),
    index(
      "journal_by_key",
      "journal",
      "CREATE UNIQUE INDEX journal_by_key ON journal (idempotency_key) WHERE idempotency_key IS NOT NULL",
    ),
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
    // Where the oldest event kept chains from, when not from the genesis
    // digest at event 1: a fork's source, or the last event pruned (chain.ts).
    table(
      "journal_anchor",
      `CREATE TABLE journal_anchor (
  singleton INTEGER PRIMARY KEY CHECK (singleton = 1),
  sequence INTEGER NOT NULL CHECK (sequence >= 1),
  digest BLOB NOT NULL CHECK (length(digest) = 32)
) STRICT`,
    ),
    ...WORKSPACE_SCHEMA_V1,
    view(
      "workspace_current",
      `CREATE VIEW workspace_current (root_id) AS
SELECT coalesce((SELECT root_id FROM journal ORDER BY sequence DESC LIMIT 1), X'${EMPTY_ROOT_ID}')`,
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
    // The keyed transactions that landed (lease.transact(fn, { key })): a key
    // is inserted in the transaction it names, so it exists exactly when that
    // transaction committed, with the journal sequences it appended (none: null).
    table(
      "run_transaction",
      `CREATE TABLE run_transaction (
  key TEXT PRIMARY KEY CHECK (length(key) BETWEEN 1 AND 512),
  first_sequence INTEGER CHECK (first_sequence IS NULL OR first_sequence >= 1),
  last_sequence INTEGER,
  committed_at INTEGER NOT NULL,
  CHECK ((first_sequence IS NULL AND last_sequence IS NULL)
    OR (first_sequence IS NOT NULL AND last_sequence >= first_sequence))
) STRICT, WITHOUT ROWID`,
    ),
  ]),
});

/** SHA-256 (hex) of SCHEMA_V1's canonical serialization; equal on every adapter. */
export const SCHEMA_V1_DIGEST: string = manifestDigest(SCHEMA_V1);
