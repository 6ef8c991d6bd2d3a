/**
 * The workspace encoding: every choice that decides which bytes a workspace
 * is stored as, in one line of text a run file records when it is created
 * and that open compares with this build's.
 *
 * Why it exists: the same workspace written with another cut frequency, node
 * size cap, inline limit or piece size gets other nodes, other ids and other
 * rows. A build that read such a file would list it correctly and then write
 * its own nodes beside the old ones — two encodings in one file, the same
 * content under two root ids, and history independence lost. The schema's
 * SQL names only some of these choices (and none of the tree's), so the file
 * records all of them, and a build refuses a file whose encoding is not its
 * own (`encoding_mismatch`) before anything is written.
 *
 * The descriptor is built from the constants themselves, never written out by
 * hand, so a constant cannot move without the descriptor — and with it
 * SCHEMA_V1_DIGEST — moving too. A change to the code of a layout rather than
 * a constant (the cut hash, an entry's or a delta's byte layout) raises
 * NODE_DOMAIN's version or DELTA_FORMAT. `EMPTY_ROOT_ID` is in it as well: it
 * is the hash of the node header, so it moves with the hash, the domain and
 * the header's layout. docs/file-format.md lists the fields.
 */
import { DELTA_FORMAT, MAX_CHAIN } from "./delta.js";
import { CHUNK_SIZE } from "./files.js";
import {
  CUT_ONE_IN,
  ENTRY_KINDS,
  INLINE_MAX,
  INLINE_NODE_MAX,
  MAX_NODE_ENTRIES,
  NODE_DOMAIN,
} from "./node.js";
import { EMPTY_ROOT_ID } from "./node-encoding.js";
import { OBJECT_KEY_PREFIX_BYTES } from "./object-key.js";
import { BYTES, CHUNK_LIST, DELTA } from "./object-rows.js";

/** `name:value,…` in the order given: a small table as one field. */
function table(entries: Record<string, number>): string {
  return Object.entries(entries)
    .map(([name, value]) => `${name}:${value}`)
    .join(",");
}

/**
 * The fields of the descriptor, in order: each `key=value`, joined with `;`.
 * The hash is SHA-256 by contract (a file's digest is what `sha256sum`
 * prints), so it is named, not derived; the empty root proves it for nodes.
 */
export const WORKSPACE_ENCODING_FIELDS: readonly (readonly [string, string])[] = Object.freeze([
  ["hash", "sha256"],
  ["node", NODE_DOMAIN],
  ["empty", EMPTY_ROOT_ID],
  ["cut", `1/${CUT_ONE_IN}`],
  ["max-entries", String(MAX_NODE_ENTRIES)],
  ["inline", String(INLINE_MAX)],
  ["inline-node", String(INLINE_NODE_MAX)],
  ["kinds", table(ENTRY_KINDS)],
  ["rows", table({ bytes: BYTES, chunks: CHUNK_LIST, delta: DELTA })],
  ["chunk", String(CHUNK_SIZE)],
  ["chain", String(MAX_CHAIN)],
  ["delta", String(DELTA_FORMAT)],
  ["key-prefix", String(OBJECT_KEY_PREFIX_BYTES)],
]);

/** The workspace encoding this build reads and writes, as a run file records it. */
export const WORKSPACE_ENCODING_V1: string = WORKSPACE_ENCODING_FIELDS.map(
  ([key, value]) => `${key}=${value}`,
).join(";");
