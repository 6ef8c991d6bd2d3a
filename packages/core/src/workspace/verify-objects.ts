/**
 * Verify's pass over the stored objects: every object re-hashed against its
 * address — a file's content (a large one piece by piece, each piece's
 * address re-derived from the running hash) and every directory node's bytes
 * (a node stored as a delta rebuilt through its chain first) — and every id
 * stored once.
 */
import { sameBytes, toHex } from "../port/bytes.js";
import type { Executor } from "../port/driver.js";
import type { HashFunctions } from "../port/hash.js";
import { READ_CHUNK } from "./files.js";
import { objectRows } from "./gc.js";
import { readNodeBytes } from "./node-bytes.js";
import { BYTES, DELTA } from "./object-rows.js";
import type { RebuiltNodes } from "./rebuilt-nodes.js";

/**
 * Ids stored more than once (only a writer that bypassed the schema's
 * trigger can do that). The key index is walked in order, so only prefixes
 * seen twice — none in a healthy file — are looked at row by row.
 */
const REPEATED_IDS = `SELECT lower(hex(id)) AS id, count(*) AS n FROM workspace_object
WHERE substr(id, 1, 8) IN (
  SELECT substr(id, 1, 8) FROM workspace_object GROUP BY substr(id, 1, 8) HAVING count(*) > 1)
GROUP BY id HAVING count(*) > 1 ORDER BY id`;
const TOTAL_BYTES = "SELECT coalesce(sum(size), 0) AS bytes FROM workspace_object";

/** What the pass found: objects and pieces re-hashed, and the problems. */
export interface ObjectsCheck {
  readonly objects: number;
  readonly chunks: number;
  readonly problems: string[];
}

/**
 * Re-hashes every object, telling `progress` the bytes done of the total
 * (moving inside a large file too). Delta chains rebuilt are kept in
 * `rebuilt`: each delta usually lies onto the row before it.
 */
export async function checkObjects(
  reader: Executor,
  hash: HashFunctions,
  rebuilt: RebuiltNodes,
  progress?: (done: number, total: number) => void,
): Promise<ObjectsCheck> {
  const problems: string[] = [];
  const totalBytes = Number((await reader.execute(TOTAL_BYTES)).rows[0]!.bytes);
  let bytes = 0;
  let objects = 0;
  let chunks = 0;
  for await (const row of objectRows(reader)) {
    progress?.(bytes, totalBytes);
    const start = bytes;
    objects++;
    bytes += Number(row.size);
    const id = row.id as Uint8Array;
    const data = row.data as Uint8Array;
    const kind = Number(row.kind);
    if (kind === BYTES) {
      if (!sameBytes(hash.sha256(data), id)) {
        problems.push(`object ${toHex(id)}: its bytes do not hash to its id`);
      }
      continue;
    }
    if (kind === DELTA) {
      const stored = await readNodeBytes(reader, id, rebuilt);
      if (stored.bytes === undefined) {
        problems.push(`node ${toHex(id)}: ${stored.damage ?? "missing"}`);
      } else if (!sameBytes(hash.sha256(stored.bytes), id)) {
        problems.push(`node ${toHex(id)}: its delta does not rebuild the bytes of its id`);
      }
      continue;
    }
    chunks += await checkLargeFile(reader, hash, id, Number(row.size), data, problems, (done) =>
      progress?.(start + done, totalBytes),
    );
  }
  progress?.(bytes, totalBytes);
  for (const row of (await reader.execute(REPEATED_IDS)).rows) {
    problems.push(`object ${String(row.id)}: stored ${String(row.n)} times (an id is stored once)`);
  }
  return { objects, chunks, problems };
}

/** A large file: its pieces in order, each present and at the address the running hash gives. */
async function checkLargeFile(
  reader: Executor,
  hash: HashFunctions,
  id: Uint8Array,
  size: number,
  list: Uint8Array,
  problems: string[],
  read?: (bytes: number) => void,
): Promise<number> {
  const running = hash.createSha256();
  let stored = 0;
  let pieces = 0;
  for (let at = 0; at < list.length; at += 32) {
    const key = list.subarray(at, at + 32);
    const row = (await reader.execute(READ_CHUNK, [key])).rows[0];
    if (row === undefined) {
      problems.push(`file ${toHex(id)}: piece ${at / 32} is missing`);
      return pieces;
    }
    const data = row.data as Uint8Array;
    running.update(data);
    stored += data.length;
    pieces++;
    read?.(stored);
    if (toHex(running.copy().digest()) !== toHex(key)) {
      problems.push(`file ${toHex(id)}: piece ${at / 32} is not at the address its bytes give`);
      return pieces;
    }
  }
  if (stored !== size) problems.push(`file ${toHex(id)}: ${stored} bytes stored, ${size} recorded`);
  else if (toHex(running.digest()) !== toHex(id)) {
    problems.push(`file ${toHex(id)}: content does not hash to its digest`);
  }
  return pieces;
}
