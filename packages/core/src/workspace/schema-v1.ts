/**
 * The workspace's tables in a version-1 run database — frozen with it (the
 * run's manifest, ../run/schema-v1.ts, lists them in its order, and its
 * digest covers them): a content-addressed object store in two tables —
 * directory nodes of prolly trees and files, small ones inline, then the
 * pieces of large files — and named pins that retain roots. A node may be
 * stored as its change to the node it replaced (./delta.ts): each such row
 * records its depth, strictly above its base's and at most MAX_CHAIN, so a
 * chain always ends at a whole node.
 *
 * What a step writes is kept to a few pages: its new objects are appended
 * together at the object table's end, since it is a rowid table, and their
 * ids' entries in its key index, which holds only each id's first 8 bytes
 * (./object-key.ts). The object and piece tables are not WITHOUT ROWID on
 * purpose: their rows (nodes of a few hundred bytes, pieces of 256 KiB) are
 * far above the twentieth of a page at which SQLite advises WITHOUT ROWID;
 * there, whole rows would sit at random keys, inside interior pages too,
 * and a step would dirty a page per row (measured: 7.7 frames a step, 42% of
 * the file's pages left empty). No index exists only to serve a foreign key:
 * garbage collection marks from what is retained and sweeps the rest
 * (./gc.ts), and `verify` checks every reference.
 *
 * The SQL strings are exactly what SQLite stores in sqlite_schema.sql.
 */

import type { SchemaObject } from "../schema/manifest.js";
import { autoIndex, index, table, trigger } from "../schema/objects.js";
import { MAX_CHAIN } from "./delta.js";
import { CHUNK_SIZE } from "./files.js";
import { OBJECT_KEY_PREFIX_BYTES, objectIdEquals } from "./object-key.js";
import { BYTES, CHUNK_LIST, DELTA } from "./object-rows.js";

/** The workspace's objects of the run database's version 1, in creation order. */
export const WORKSPACE_SCHEMA_V1: readonly SchemaObject[] = Object.freeze([
  table(
    "workspace_object",
    `CREATE TABLE workspace_object (
  id BLOB NOT NULL CHECK (length(id) = 32),
  kind INTEGER NOT NULL CHECK (kind IN (${BYTES}, ${CHUNK_LIST}, ${DELTA})),
  size INTEGER NOT NULL CHECK (size >= 0),
  depth INTEGER NOT NULL DEFAULT 0,
  data BLOB NOT NULL,
  CHECK ((kind = ${BYTES} AND depth = 0 AND length(data) = size)
    OR (kind = ${CHUNK_LIST} AND depth = 0 AND size > ${CHUNK_SIZE} AND length(data) > 32 AND length(data) % 32 = 0)
    OR (kind = ${DELTA} AND depth BETWEEN 1 AND ${MAX_CHAIN} AND length(data) > 32))
) STRICT`,
  ),
  // The key index holds each id's first 8 bytes, not all 32 (see
  // ../workspace/object-key.ts); the triggers keep each id once.
  index(
    "workspace_object_by_id",
    "workspace_object",
    `CREATE INDEX workspace_object_by_id ON workspace_object (substr(id, 1, ${OBJECT_KEY_PREFIX_BYTES}))`,
  ),
  trigger(
    "workspace_object_once",
    "workspace_object",
    `CREATE TRIGGER workspace_object_once BEFORE INSERT ON workspace_object
WHEN EXISTS (SELECT 1 FROM workspace_object WHERE ${objectIdEquals("id", "NEW.id")})
BEGIN SELECT RAISE(IGNORE); END`,
  ),
  trigger(
    "workspace_object_id_fixed",
    "workspace_object",
    `CREATE TRIGGER workspace_object_id_fixed BEFORE UPDATE OF id ON workspace_object
BEGIN SELECT RAISE(ABORT, 'an object id never changes: it is the address of its content'); END`,
  ),
  table(
    "workspace_chunk",
    `CREATE TABLE workspace_chunk (
  prefix_digest BLOB NOT NULL PRIMARY KEY CHECK (length(prefix_digest) = 32),
  data BLOB NOT NULL CHECK (length(data) BETWEEN 1 AND ${CHUNK_SIZE})
) STRICT`,
  ),
  autoIndex("workspace_chunk", 1),
  table(
    "workspace_pin",
    `CREATE TABLE workspace_pin (
  name TEXT PRIMARY KEY CHECK (length(name) BETWEEN 1 AND 256),
  root_id BLOB NOT NULL CHECK (length(root_id) = 32),
  created_at INTEGER NOT NULL
) STRICT, WITHOUT ROWID`,
  ),
]);
