/**
 * Garbage collection, by marking and sweeping. What is retained:
 * the root of every journal event (the newest one's is the current root), of
 * every pin, and the empty root; everything those roots reach — directory
 * nodes, files, and the pieces of large files. Collection walks from the
 * retained roots, marking each object once (a node shared by many roots is
 * walked once), then deletes every object and piece left unmarked — after
 * storing whole any kept node stored as a delta onto one of them. No index
 * is kept just so that collection can find references: a step writes fewer
 * pages, and collection, which is rare, pays with one walk. (Pruning, which
 * drops old events and so the roots only they retained, is the journal's.)
 */

import type { Executor } from "../port/driver.js";
import { RunledgerError } from "../port/errors.js";
import { keysetRows } from "../port/keyset.js";
import { placeholders } from "../port/placeholders.js";
import type { WorkspaceContext } from "./context.js";
import { idKey } from "./id-key.js";
import { isNodeBytes } from "./node.js";
import { readNodeBytes } from "./node-bytes.js";
import { EMPTY_ROOT_ID_BYTES } from "./node-encoding.js";
import { NodeLoader } from "./node-loader.js";
import { OBJECT_BY_ID, objectKey } from "./object-key.js";
import { BYTES, CHUNK_LIST, DELTA } from "./object-rows.js";
import { pinnedRoots } from "./pins.js";
import { reachedNodes } from "./reached-nodes.js";
import type { JournalRoots, RootRef } from "./root-journal.js";

export interface GarbageReport {
  /** Directory nodes deleted. */
  readonly nodes: number;
  /** Files' objects deleted (their content, or a large file's piece list). */
  readonly files: number;
  /** Pieces of large files deleted. */
  readonly chunks: number;
}

const FILE_KIND = `SELECT kind, data FROM workspace_object WHERE ${OBJECT_BY_ID}`;
const STORE_WHOLE = "UPDATE workspace_object SET kind = 0, depth = 0, data = ? WHERE rowid = ?";
const PAGE = 500;
/** By rowid: the table's own order, so a page is a range of it and nothing is sorted. */
const OBJECT_PAGE =
  "SELECT rowid, id, kind, size, data FROM workspace_object WHERE rowid > ? ORDER BY rowid LIMIT ?";
const CHUNK_PAGE =
  "SELECT prefix_digest FROM workspace_chunk WHERE prefix_digest > ? ORDER BY prefix_digest LIMIT ?";

/** The objects and pieces reachable from retained roots, by idKey. */
export interface Marks {
  readonly nodes: Set<string>;
  readonly files: Set<string>;
  readonly chunks: Set<string>;
}

/** Walks everything the retained roots reach. */
export async function markRetained(
  executor: Executor,
  workspace: WorkspaceContext,
): Promise<Marks> {
  const marks: Marks = { nodes: new Set(), files: new Set(), chunks: new Set() };
  const loader = new NodeLoader(executor, workspace.nodes, workspace.journal);
  const retained = await retainedRoots(executor, workspace.journal);
  // A root its events hold is read from them (roots.ts); a row of it, if any, is marked too.
  const held = new Map(retained.map((root) => [idKey(root.id), root.bytes]));
  const roots = [EMPTY_ROOT_ID_BYTES, ...retained.map((root) => root.id)];
  const load = (id: Uint8Array) => {
    const bytes = held.get(idKey(id));
    return bytes === undefined ? loader.load(id) : loader.root(id, { held: bytes });
  };
  for await (const node of reachedNodes(roots, load, marks.nodes)) {
    for (const item of node.items) {
      // Directories are walked by reachedNodes; an inline file has no row of its own.
      if (item.kind !== "file" || item.content !== undefined) continue;
      const fileKey = idKey(item.target);
      if (marks.files.has(fileKey)) continue;
      marks.files.add(fileKey);
      const row = (await executor.execute(FILE_KIND, objectKey(item.target))).rows[0];
      if (row === undefined) {
        throw new RunledgerError(
          "corrupt",
          "a file a retained root names is missing; nothing was collected; run verify",
        );
      }
      if (Number(row.kind) === CHUNK_LIST) {
        const list = row.data as Uint8Array;
        for (let at = 0; at < list.length; at += 32)
          marks.chunks.add(idKey(list.subarray(at, at + 32)));
      }
    }
  }
  return marks;
}

/** Deletes every node, file and piece that nothing retained reaches. */
export async function collectGarbage(
  executor: Executor,
  workspace: WorkspaceContext,
): Promise<GarbageReport> {
  const marks = await markRetained(executor, workspace);
  let nodes = 0;
  let files = 0;
  let chunks = 0;
  const doomed: number[] = [];
  const doomedKeys = new Set<string>();
  const kept: { id: Uint8Array; rowid: number; base: string }[] = [];
  for await (const row of objectRows(executor)) {
    const id = row.id as Uint8Array;
    const key = idKey(id);
    const kind = Number(row.kind);
    const data = row.data as Uint8Array;
    if (marks.nodes.has(key) || marks.files.has(key)) {
      if (kind === DELTA) {
        kept.push({ id, rowid: Number(row.rowid), base: idKey(data.subarray(0, 32)) });
      }
      continue;
    }
    doomed.push(Number(row.rowid));
    doomedKeys.add(key);
    if (kind === DELTA || (kind === BYTES && isNodeBytes(data))) nodes++;
    else files++;
  }
  // A kept delta whose base goes is first stored whole (its depth 0 stays below any delta onto it).
  for (const { id, rowid } of kept.filter((delta) => doomedKeys.has(delta.base))) {
    const stored = await readNodeBytes(executor, id);
    if (stored.bytes === undefined) {
      throw new RunledgerError(
        "corrupt",
        "a retained directory node cannot be rebuilt from its delta; nothing was collected; run verify",
      );
    }
    await executor.execute(STORE_WHOLE, [stored.bytes, rowid]);
  }
  await deleteAll(executor, "DELETE FROM workspace_object WHERE rowid IN", doomed);
  const doomedChunks: Uint8Array[] = [];
  const byDigest = (row: Record<string, unknown>) => row.prefix_digest as Uint8Array;
  for await (const row of pages(executor, CHUNK_PAGE, new Uint8Array(0), byDigest)) {
    if (!marks.chunks.has(idKey(row.prefix_digest as Uint8Array))) {
      doomedChunks.push(row.prefix_digest as Uint8Array);
    }
  }
  chunks = doomedChunks.length;
  await deleteAll(executor, "DELETE FROM workspace_chunk WHERE prefix_digest IN", doomedChunks);
  return { nodes, files, chunks };
}

/**
 * The roots the pins and the journal retain, each once (the empty root is
 * retained besides), each with its bytes when an event holds them: first
 * those only pins hold, by id, then the journal's in the order it first
 * recorded them — consecutive roots share most of their paths, so a walk
 * over them finds its nodes cached, or (verify) its delta chains rebuilt
 * from one another instead of from their whole nodes.
 */
export async function retainedRoots(executor: Executor, journal: JournalRoots): Promise<RootRef[]> {
  const recorded = await journal.roots(executor);
  const seen = new Set(recorded.map((root) => idKey(root.id)));
  const pinned = (await pinnedRoots(executor)).filter((id) => !seen.has(idKey(id)));
  return [...pinned.map((id) => ({ id })), ...recorded];
}

/** Every stored object (rowid, id, kind, size, data), in rowid order, a page at a time. */
export function objectRows(executor: Executor): AsyncGenerator<Record<string, unknown>> {
  return pages(executor, OBJECT_PAGE, 0, (row) => Number(row.rowid));
}

/** Every row of a keyed table, a page at a time (keyset paging from `start`). */
function pages<K extends number | Uint8Array>(
  executor: Executor,
  sql: string,
  start: K,
  keyOf: (row: Record<string, unknown>) => K,
): AsyncGenerator<Record<string, unknown>> {
  return keysetRows({
    start,
    page: async (after, limit) => (await executor.execute(sql, [after, limit])).rows,
    keyOf,
    limit: PAGE,
  });
}

/** Deletes the rows `ids` name, a page at a time: `deleteIn` is the statement up to its IN list. */
async function deleteAll(
  executor: Executor,
  deleteIn: string,
  ids: readonly (Uint8Array | number)[],
): Promise<void> {
  for (let start = 0; start < ids.length; start += PAGE) {
    const batch = ids.slice(start, start + PAGE);
    await executor.execute(`${deleteIn} ${placeholders(1, batch.length)}`, batch);
  }
}
