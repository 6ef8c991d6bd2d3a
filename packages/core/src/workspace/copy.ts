import type { Executor } from "../port/driver.js";
import { RunledgerError } from "../port/errors.js";
import { toHex } from "../port/hash.js";
import { blobSize } from "./blobs.js";
import { loadEntries, writeTree } from "./trees.js";

const READ_CHUNK = `SELECT c.chunk_digest, c.data FROM workspace_blob_chunk b
JOIN workspace_chunk c ON c.chunk_digest = b.chunk_digest
WHERE b.digest = ? AND b.ordinal = ?`;

/**
 * Copies a tree and everything it reaches from one run database to another,
 * one chunk at a time, skipping what the target already holds. Returns the
 * tree's id in the target, which equals its id in the source.
 */
export async function copyTree(
  source: Executor,
  target: Executor,
  tree: Uint8Array,
  copied: Set<string> = new Set(),
): Promise<Uint8Array> {
  const entries = await loadEntries(source, tree);
  for (const entry of entries) {
    const key = toHex(entry.target);
    if (copied.has(key)) continue;
    if (entry.kind === "directory") await copyTree(source, target, entry.target, copied);
    else await copyBlob(source, target, entry.target);
    copied.add(key);
  }
  return writeTree(target, entries);
}

async function copyBlob(source: Executor, target: Executor, digest: Uint8Array): Promise<void> {
  const present = await target.execute("SELECT 1 FROM workspace_blob WHERE digest = ?", [digest]);
  if (present.rows.length > 0) return;
  const { size, chunkCount } = await blobSize(source, digest);
  await target.execute("INSERT INTO workspace_blob (digest, size, chunk_count) VALUES (?, ?, ?)", [
    digest,
    size,
    chunkCount,
  ]);
  for (let ordinal = 0; ordinal < chunkCount; ordinal++) {
    const row = (await source.execute(READ_CHUNK, [digest, ordinal])).rows[0];
    if (row === undefined) {
      throw new RunledgerError(
        "corrupt",
        `the source misses chunk ${ordinal} of a file; run verify on it`,
      );
    }
    await target.execute(
      "INSERT INTO workspace_chunk (chunk_digest, data) VALUES (?, ?) ON CONFLICT DO NOTHING",
      [row.chunk_digest as Uint8Array, row.data as Uint8Array],
    );
    await target.execute(
      "INSERT INTO workspace_blob_chunk (digest, ordinal, chunk_digest) VALUES (?, ?, ?)",
      [digest, ordinal, row.chunk_digest as Uint8Array],
    );
  }
}
