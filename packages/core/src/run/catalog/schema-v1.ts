/**
 * The run catalog, version 1 — frozen. A small database of its own that
 * lists the runs a store has created, opened, stopped, resumed and removed:
 * one row a run, keyed by the run's canonical location, with what a listing
 * filters and sorts on (workflow, status, times) and what it shows (the stop
 * reason, the last sequence). It is derived from the run files and never
 * their source of truth: two files are not one transaction, so every row
 * can be rebuilt from its run (see ./reconcile.ts), and a row that
 * disagrees with its run is repaired, never trusted over it.
 *
 * Recognized like every runledger database (../schema/recognize.ts), under
 * its own application id — or, on a server that refuses the header, by its
 * identity table `runledger_catalog` — so a catalog is never taken for a
 * run and a run never for a catalog.
 */
import { manifestDigest, type SchemaManifest } from "../../schema/manifest.js";
import { index, table } from "../../schema/objects.js";

/** PRAGMA application_id of every runledger catalog: "RLCA" in ASCII. */
export const CATALOG_APPLICATION_ID = 0x524c4341;

export const CATALOG_SCHEMA_VERSION = 1;

/** The statuses a run row may hold, as the run database's own CHECK names them. */
const STATUSES = "'running', 'suspended', 'interrupted', 'completed', 'failed', 'cancelled'";

export const CATALOG_SCHEMA_V1: SchemaManifest = Object.freeze({
  title: "runledger catalog",
  applicationId: CATALOG_APPLICATION_ID,
  userVersion: CATALOG_SCHEMA_VERSION,
  // Where the header cannot be written (a libSQL server), this table names the format.
  identity: "runledger_catalog",
  objects: Object.freeze([
    table(
      "runledger_catalog",
      `CREATE TABLE runledger_catalog (
  singleton INTEGER PRIMARY KEY CHECK (singleton = 1),
  created_at INTEGER NOT NULL CHECK (created_at >= 0)
) STRICT`,
    ),
    table(
      "runs",
      `CREATE TABLE runs (
  location TEXT PRIMARY KEY CHECK (length(location) BETWEEN 1 AND 4096),
  workflow_id TEXT NOT NULL CHECK (length(workflow_id) BETWEEN 1 AND 256),
  run_id TEXT NOT NULL CHECK (length(run_id) BETWEEN 1 AND 256),
  status TEXT NOT NULL CHECK (status IN (${STATUSES})),
  stop_reason TEXT CHECK (stop_reason IS NULL OR json_valid(stop_reason)),
  created_at INTEGER NOT NULL CHECK (created_at >= 0),
  updated_at INTEGER NOT NULL CHECK (updated_at >= 0),
  last_sequence INTEGER NOT NULL CHECK (last_sequence >= 0)
) STRICT, WITHOUT ROWID`,
    ),
    index(
      "runs_by_created",
      "runs",
      "CREATE INDEX runs_by_created ON runs (created_at DESC, location)",
    ),
    index(
      "runs_by_status",
      "runs",
      "CREATE INDEX runs_by_status ON runs (status, created_at DESC, location)",
    ),
    index(
      "runs_by_workflow",
      "runs",
      "CREATE INDEX runs_by_workflow ON runs (workflow_id, created_at DESC, location)",
    ),
  ]),
});

export const CATALOG_SCHEMA_V1_DIGEST: string = manifestDigest(CATALOG_SCHEMA_V1);
