/**
 * Trees: one row per directory, addressed by the hash of its entries (see
 * identity.ts), so equal directories are stored once and a change rewrites
 * only the directories on the changed paths, not the whole workspace.
 */
import type { Executor } from "../port/driver.js";
import { RunledgerError } from "../port/errors.js";
import { type EntryKind, type TreeEntry, treeId } from "./identity.js";

const LOAD =
  "SELECT name, kind, blob_digest, subtree_id FROM workspace_tree_entry WHERE tree_id = ?";
const LOOKUP = `SELECT name, kind, blob_digest, subtree_id FROM workspace_tree_entry
WHERE tree_id = ? AND name = ?`;
const INSERT_TREE = `INSERT INTO workspace_tree (tree_id, entry_count) VALUES (?, ?)
ON CONFLICT DO NOTHING`;
const INSERT_ENTRY = `INSERT INTO workspace_tree_entry (tree_id, name, kind, blob_digest, subtree_id)
VALUES (?, ?, ?, ?, ?)`;

export async function loadEntries(executor: Executor, tree: Uint8Array): Promise<TreeEntry[]> {
  const { rows } = await executor.execute(LOAD, [tree]);
  return rows.map(toEntry);
}

export async function lookupEntry(
  executor: Executor,
  tree: Uint8Array,
  name: string,
): Promise<TreeEntry | undefined> {
  const row = (await executor.execute(LOOKUP, [tree, name])).rows[0];
  return row === undefined ? undefined : toEntry(row);
}

/** Stores a directory (once per id) and returns its id. */
export async function writeTree(
  executor: Executor,
  entries: readonly TreeEntry[],
): Promise<Uint8Array> {
  const id = treeId(entries);
  const inserted = await executor.execute(INSERT_TREE, [id, entries.length]);
  if (inserted.changes === 1) {
    for (const entry of entries) {
      const file = entry.kind === "file";
      await executor.execute(INSERT_ENTRY, [
        id,
        entry.name,
        entry.kind,
        file ? entry.target : null,
        file ? null : entry.target,
      ]);
    }
  }
  return id;
}

/**
 * Follows path segments from a tree. Returns the entry found, a directory
 * entry for the tree itself when `segments` is empty, or undefined.
 */
export async function resolve(
  executor: Executor,
  tree: Uint8Array,
  segments: readonly string[],
): Promise<TreeEntry | undefined> {
  let entry: TreeEntry = { name: "", kind: "directory", target: tree };
  for (const segment of segments) {
    if (entry.kind !== "directory") return undefined;
    const next = await lookupEntry(executor, entry.target, segment);
    if (next === undefined) return undefined;
    entry = next;
  }
  return entry;
}

/** One planned change below a directory, by entry name. */
export type Edit =
  | { readonly kind: "file"; readonly digest: Uint8Array }
  | { readonly kind: "delete" }
  | { readonly kind: "directory"; readonly edits: Map<string, Edit> };

/** Builds the nested edit plan; a path given twice, or as both file and directory, is a conflict. */
export function planEdits(
  puts: ReadonlyArray<readonly [segments: string[], digest: Uint8Array]>,
  deletes: ReadonlyArray<string[]>,
): Map<string, Edit> {
  const top = new Map<string, Edit>();
  const place = (segments: string[], leaf: Edit) => {
    let level = top;
    segments.forEach((segment, i) => {
      const existing = level.get(segment);
      if (i === segments.length - 1) {
        if (existing !== undefined)
          conflict(segments, "named twice, or both as a file and a directory");
        level.set(segment, leaf);
        return;
      }
      if (existing === undefined) {
        const edits = new Map<string, Edit>();
        level.set(segment, { kind: "directory", edits });
        level = edits;
      } else if (existing.kind === "directory") {
        level = existing.edits;
      } else {
        conflict(segments, "a parent directory is also written or deleted as a file");
      }
    });
  };
  for (const [segments, digest] of puts) place(segments, { kind: "file", digest });
  for (const segments of deletes) place(segments, { kind: "delete" });
  return top;
}

/**
 * Applies an edit plan to a directory and stores every rewritten directory.
 * Returns the new id, or null when the directory ends up empty (an empty
 * directory is not kept, except the top, which the caller keeps).
 */
export async function rewrite(
  executor: Executor,
  tree: Uint8Array | null,
  edits: Map<string, Edit>,
  prefix: string[] = [],
): Promise<Uint8Array | null> {
  const entries = new Map<string, TreeEntry>();
  if (tree !== null)
    for (const entry of await loadEntries(executor, tree)) entries.set(entry.name, entry);
  for (const [name, edit] of edits) {
    const path = [...prefix, name];
    const existing = entries.get(name);
    if (edit.kind === "file") {
      if (existing?.kind === "directory") conflict(path, "a directory is there; delete it first");
      entries.set(name, { name, kind: "file", target: edit.digest });
    } else if (edit.kind === "delete") {
      if (existing === undefined) {
        throw new RunledgerError(
          "path_not_found",
          `cannot delete ${path.join("/")}: nothing is there`,
          {
            details: { path: path.join("/") },
          },
        );
      }
      entries.delete(name);
    } else {
      if (existing?.kind === "file") conflict(path, "a file is there; delete it first");
      const subtree = await rewrite(executor, existing?.target ?? null, edit.edits, path);
      if (subtree === null) entries.delete(name);
      else entries.set(name, { name, kind: "directory", target: subtree });
    }
  }
  if (entries.size === 0 && prefix.length > 0) return null;
  return writeTree(executor, [...entries.values()]);
}

function conflict(segments: readonly string[], why: string): never {
  throw new RunledgerError("path_conflict", `${segments.join("/")}: ${why}; nothing was written`, {
    details: { path: segments.join("/") },
  });
}

function toEntry(row: Record<string, unknown>): TreeEntry {
  const kind = row.kind as EntryKind;
  return {
    name: String(row.name),
    kind,
    target: (kind === "file" ? row.blob_digest : row.subtree_id) as Uint8Array,
  };
}
