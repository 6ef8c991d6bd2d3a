/**
 * The chunk check. Every commit stores its contents in the chunk store in
 * the same transaction, so a chunk can only go missing from outside (a
 * damaged or hand-edited file, a partial restore). After a unit commits, the
 * check lists the contents its commits put that the chunk store lacks, and
 * stores each again: from the caller's content source first (checked against
 * its digest: wrong bytes are never stored), else from the unit's own staged
 * copy while it still exists. What neither has is reported, never invented.
 */
import { toHex } from "../port/bytes.js";
import { sha256Hex } from "../port/hash.js";
import type { DatabaseAccess } from "./context.js";
import type { ChunkCheck, ContentSource } from "./types.js";

/** Which commits to check: one unit's, or the whole log's. */
export type ChunkScope = { readonly txnId: string } | { readonly all: true };

export async function checkChunks(
  access: DatabaseAccess,
  scope: ChunkScope,
  source: ContentSource | undefined,
): Promise<ChunkCheck> {
  const [where, params] =
    "txnId" in scope
      ? [
          "o.commit_id IN (SELECT commit_id FROM log_commit WHERE txn_id = ?) AND o.kind = 'put'",
          [scope.txnId],
        ]
      : ["o.kind = 'put'", []];
  const { checked, missing } = await access.read(async (reader) => {
    const count = await reader.execute(
      `SELECT count(*) AS n,
  coalesce(sum(NOT EXISTS (SELECT 1 FROM chunk k WHERE k.digest = o.digest)), 0) AS missing
FROM log_op o WHERE ${where}`,
      params,
    );
    const row = count.rows[0];
    if (Number(row?.missing ?? 0) === 0) return { checked: Number(row?.n ?? 0), missing: [] };
    const absent = await reader.execute(
      `SELECT DISTINCT o.digest FROM log_op o WHERE ${where}
AND NOT EXISTS (SELECT 1 FROM chunk k WHERE k.digest = o.digest)`,
      params,
    );
    return {
      checked: Number(row?.n ?? 0),
      missing: absent.rows.map((found) => found.digest as Uint8Array),
    };
  });
  const restored: string[] = [];
  const unavailable: string[] = [];
  for (const digest of missing) {
    const hex = toHex(digest);
    let data = await source?.read(hex);
    if (data !== undefined && sha256Hex(data) !== hex) data = undefined;
    if (data === undefined && "txnId" in scope) {
      data = await access.read(async (reader) => {
        const { rows } = await reader.execute(
          "SELECT data FROM staged_content WHERE txn_id = ? AND digest = ? LIMIT 1",
          [scope.txnId, digest],
        );
        return rows[0]?.data as Uint8Array | undefined;
      });
    }
    if (data === undefined) {
      unavailable.push(hex);
      continue;
    }
    const bytes = data;
    await access.transact((tx) =>
      tx.execute(
        "INSERT INTO chunk (digest, size, data) VALUES (?, ?, ?) ON CONFLICT (digest) DO NOTHING",
        [digest, bytes.byteLength, bytes],
      ),
    );
    restored.push(hex);
  }
  return { checked, restored, unavailable };
}
