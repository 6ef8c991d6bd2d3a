import type { Executor } from "../port/driver.js";
import { createSha256, sha256, toHex } from "../port/hash.js";
import { type EntryKind, rootId, type TreeEntry, treeId } from "../workspace/identity.js";

const READ_CHUNK = `SELECT c.chunk_digest, c.data FROM workspace_blob_chunk b
JOIN workspace_chunk c ON c.chunk_digest = b.chunk_digest
WHERE b.digest = ? AND b.ordinal = ?`;

export interface VerifyReport {
  readonly ok: boolean;
  /** One line per problem found; empty when ok. */
  readonly problems: string[];
  readonly counts: {
    readonly events: number;
    readonly blobs: number;
    readonly trees: number;
    readonly roots: number;
  };
}

export type VerifyProgress = (step: string, done: number, total: number) => void;

/**
 * The deep check, O(data) and explicit (opening never does this): SQLite's
 * integrity_check and foreign_key_check, the journal's gap-free sequence, and
 * every stored digest recomputed — blobs from their chunks, one chunk at a
 * time; trees from their entries; roots from their trees.
 */
export async function verifyRun(
  reader: Executor,
  progress?: VerifyProgress,
): Promise<VerifyReport> {
  const problems: string[] = [];
  const integrity = await reader.execute("PRAGMA integrity_check");
  const verdicts = integrity.rows.map((row) => String(Object.values(row)[0]));
  if (verdicts.length !== 1 || verdicts[0] !== "ok") {
    problems.push(...verdicts.map((line) => `integrity_check: ${line}`));
  }
  const foreign = await reader.execute("PRAGMA foreign_key_check");
  for (const row of foreign.rows) {
    problems.push(
      `foreign_key_check: ${String(row.table)} row ${String(row.rowid)} → ${String(row.parent)}`,
    );
  }

  const journal = (
    await reader.execute(
      "SELECT count(*) AS n, min(sequence) AS lo, max(sequence) AS hi FROM journal",
    )
  ).rows[0]!;
  const events = Number(journal.n);
  if (events > 0 && Number(journal.hi) - Number(journal.lo) + 1 !== events) {
    problems.push(
      `journal: ${events} events between ${journal.lo} and ${journal.hi}: the sequence has gaps`,
    );
  }

  const blobs = (await reader.execute("SELECT digest, size, chunk_count FROM workspace_blob")).rows;
  for (const [i, blob] of blobs.entries()) {
    progress?.("blobs", i, blobs.length);
    const digest = blob.digest as Uint8Array;
    const hash = createSha256();
    let size = 0;
    const chunkCount = Number(blob.chunk_count);
    for (let ordinal = 0; ordinal < chunkCount; ordinal++) {
      const chunk = (await reader.execute(READ_CHUNK, [digest, ordinal])).rows[0];
      if (chunk === undefined) {
        problems.push(`blob ${toHex(digest)}: chunk ${ordinal} is missing`);
        break;
      }
      const data = chunk.data as Uint8Array;
      if (toHex(sha256(data)) !== toHex(chunk.chunk_digest as Uint8Array)) {
        problems.push(`blob ${toHex(digest)}: chunk ${ordinal} does not hash to its digest`);
      }
      size += data.length;
      hash.update(data);
    }
    if (size !== Number(blob.size))
      problems.push(`blob ${toHex(digest)}: ${size} bytes stored, ${blob.size} recorded`);
    else if (toHex(hash.digest()) !== toHex(digest))
      problems.push(`blob ${toHex(digest)}: content does not hash to its digest`);
  }
  progress?.("blobs", blobs.length, blobs.length);

  const trees = (await reader.execute("SELECT tree_id, entry_count FROM workspace_tree")).rows;
  for (const [i, tree] of trees.entries()) {
    progress?.("trees", i, trees.length);
    const id = tree.tree_id as Uint8Array;
    const { rows } = await reader.execute(
      "SELECT name, kind, blob_digest, subtree_id FROM workspace_tree_entry WHERE tree_id = ?",
      [id],
    );
    const entries: TreeEntry[] = rows.map((row) => ({
      name: String(row.name),
      kind: row.kind as EntryKind,
      target: (row.kind === "file" ? row.blob_digest : row.subtree_id) as Uint8Array,
    }));
    if (entries.length !== Number(tree.entry_count)) {
      problems.push(
        `tree ${toHex(id)}: ${entries.length} entries stored, ${tree.entry_count} recorded`,
      );
    }
    if (toHex(treeId(entries)) !== toHex(id))
      problems.push(`tree ${toHex(id)}: entries do not hash to its id`);
  }
  progress?.("trees", trees.length, trees.length);

  const roots = (await reader.execute("SELECT root_id, tree_id FROM workspace_root")).rows;
  for (const root of roots) {
    const id = root.root_id as Uint8Array;
    if (toHex(rootId(root.tree_id as Uint8Array)) !== toHex(id)) {
      problems.push(`root ${toHex(id)}: its tree does not hash to its id`);
    }
  }

  return {
    ok: problems.length === 0,
    problems,
    counts: { events, blobs: blobs.length, trees: trees.length, roots: roots.length },
  };
}
