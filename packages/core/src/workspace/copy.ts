/**
 * Copies everything one root reaches from one run database to another —
 * files as stored, nodes whole, large files one piece at a time — skipping
 * what the target already holds. Ids are content addresses, so the root has
 * the same id in the target as in the source.
 */
import { sameBytes } from "../port/bytes.js";
import type { Executor } from "../port/driver.js";
import { RunledgerError } from "../port/errors.js";
import { INSERT_CHUNK, READ_CHUNK, READ_OBJECT } from "./files.js";
import { idKey } from "./id-key.js";
import { type DirectoryNode, decodeNode, INLINE_NODE_MAX } from "./node.js";
import { readNodeBytes } from "./node-bytes.js";
import { objectKey } from "./object-key.js";
import { BYTES, CHUNK_LIST, insertObjects, type ObjectRow } from "./object-rows.js";
import { reachedNodes } from "./reached-nodes.js";
import type { JournalRoots } from "./root-journal.js";
import { readRootBytes } from "./roots.js";

/**
 * Copies what `root` reaches from `source` (whose journal may hold the root
 * itself) to `target`. Returns the root's bytes when they are small enough
 * for the target's event to hold them (roots.ts): then they are not written
 * as a row.
 */
export async function copyRoot(
  source: Executor,
  journal: JournalRoots,
  target: Executor,
  root: Uint8Array,
): Promise<{ rootBytes?: Uint8Array }> {
  let rootBytes: Uint8Array | undefined;
  const seen = new Set<string>();
  const rows: ObjectRow[] = [];
  let held = 0;
  const flush = async () => {
    held = 0;
    await insertObjects(target, rows.splice(0));
  };
  const keep = async (row: ObjectRow) => {
    rows.push(row);
    held += row.data.length;
    // A few MiB at a time: small files may be up to a piece each.
    if (rows.length >= 256 || held >= 4 * 1024 * 1024) await flush();
  };
  const copyObject = async (id: Uint8Array) => {
    const row = (await source.execute(READ_OBJECT, objectKey(id))).rows[0];
    if (row === undefined) {
      throw new RunledgerError(
        "corrupt",
        "the source misses an object its root reaches; run verify on it",
      );
    }
    const kind = Number(row.kind) as 0 | 1;
    const data = row.data as Uint8Array;
    if (kind === CHUNK_LIST) {
      for (let at = 0; at < data.length; at += 32) {
        const key = data.subarray(at, at + 32);
        const chunk = (await source.execute(READ_CHUNK, [key])).rows[0];
        if (chunk === undefined) {
          throw new RunledgerError(
            "corrupt",
            "the source misses a piece of a file; run verify on it",
          );
        }
        await target.execute(INSERT_CHUNK, [key, chunk.data as Uint8Array]);
      }
    }
    await keep({ id, kind, size: Number(row.size), data });
  };
  // A node goes whole: a delta's base may not be among what the root reaches.
  // The root may be held by the source's events alone (roots.ts), as the target's event will hold it.
  const copyNode = async (id: Uint8Array): Promise<DirectoryNode> => {
    const isRoot = sameBytes(id, root);
    const stored = await (isRoot ? readRootBytes(source, journal, id) : readNodeBytes(source, id));
    const { bytes } = stored;
    const node = bytes === undefined ? undefined : decodeNode(id, bytes);
    if (node === undefined || bytes === undefined) {
      throw new RunledgerError(
        "corrupt",
        stored.missing
          ? "the source misses a directory node its root reaches; run verify on it"
          : "the source holds a directory node it cannot read; run verify on it",
      );
    }
    if (isRoot && bytes.length <= INLINE_NODE_MAX) rootBytes = bytes;
    else await keep({ id, kind: BYTES, size: bytes.length, data: bytes });
    return node;
  };
  // A directory held in its entry is copied with its parent's row.
  for await (const node of reachedNodes([root], copyNode, seen)) {
    for (const item of node.items) {
      if (item.kind === "file" && item.content === undefined && !seen.has(idKey(item.target))) {
        seen.add(idKey(item.target));
        await copyObject(item.target);
      }
    }
  }
  await flush();
  return rootBytes === undefined ? {} : { rootBytes };
}
