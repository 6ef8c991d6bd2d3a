/**
 * Where a run file's bytes go.
 *
 * The growing workload keeps every version of its directory: each step's
 * root reaches a new leaf and a new node on every level above it, and the
 * journal retains them all. `layoutOf` reads a finished run file and says
 * how many bytes each table and index holds (SQLite's dbstat), how many
 * bytes of directory nodes each step added, by level — the nodes' full
 * size — and how many bytes their rows actually hold: a node may be stored
 * as a delta onto the node it replaced (docs/file-format.md). The file
 * format is read here independently of core, as a reader of the file would:
 * a delta is rebuilt from its base by its copy and insert operations.
 */
import Database from "better-sqlite3";

const DOMAIN = Buffer.from("runledger/node/1\u0000", "utf8");
const DIRECTORY = 2;
const INLINE_FILE = 3;
const INLINE_DIRECTORY = 4;

export interface Layout {
  /** SQLite's pages per table and index, in bytes. */
  readonly bytesByObject: Readonly<Record<string, number>>;
  /** Bytes of directory nodes the run's roots reached first at each step, by level, per step (full size). */
  readonly nodeBytesPerStep: Readonly<Record<string, number>>;
  /** Bytes of file content stored as rows of their own, per step. */
  readonly fileBytesPerStep: number;
  /** Bytes the rows of those new nodes hold (whole or as deltas), per step. */
  readonly nodeBytesStoredPerStep: number;
  /** Of those nodes, the share stored as deltas, and the deepest chain. */
  readonly deltaShare: number;
  readonly deepestChain: number;
}

interface Entry {
  readonly name: string;
  readonly isDirectory: boolean;
  readonly target: Buffer;
  /** A directory held in this entry: its top node's bytes (no row of its own). */
  readonly held?: Buffer;
}

interface Node {
  readonly key: string;
  readonly level: number;
  readonly entries: readonly Entry[];
  readonly length: number;
  /** The bytes its row holds, and its depth (0: whole). */
  readonly stored: number;
  readonly depth: number;
  /** A root held by its journal events, not a row. */
  readonly held?: boolean;
}

interface Row {
  kind: number;
  size: number;
  depth: number;
  data: Buffer;
}

export function layoutOf(file: string): Layout {
  const db = new Database(file, { readonly: true });
  try {
    const bytesByObject: Record<string, number> = {};
    for (const row of db
      .prepare("SELECT name, sum(pgsize) AS bytes FROM dbstat GROUP BY name ORDER BY bytes DESC")
      .all() as { name: string; bytes: number }[]) {
      bytesByObject[row.name] = row.bytes;
    }
    // The object key index holds 8-byte id prefixes (core's workspace/object-key.ts).
    const read = db.prepare(
      "SELECT kind, size, depth, data FROM workspace_object WHERE substr(id, 1, 8) = ? AND id = ?",
    );
    const rebuild = (id: Buffer): Buffer => {
      const row = read.get(id.subarray(0, 8), id) as Row | undefined;
      if (row === undefined) throw new Error(`node ${id.toString("hex")} is missing in ${file}`);
      if (row.kind === 0) return row.data;
      if (row.kind !== 2) throw new Error(`object ${id.toString("hex")} is not a node`);
      return applyDelta(rebuild(row.data.subarray(0, 32)), row.data, row.size);
    };
    const nodes = new Map<string, Node>();
    /** Roots their journal events hold (core's workspace/roots.ts): no row of their own. */
    const held = new Map<string, Buffer>();
    const load = (id: Buffer): Node => {
      const key = id.toString("hex");
      const known = nodes.get(key);
      if (known !== undefined) return known;
      const row = read.get(id.subarray(0, 8), id) as Row | undefined;
      const inJournal = held.get(key);
      if (row === undefined && inJournal !== undefined) {
        const node = { ...decode(key, inJournal), stored: inJournal.length, depth: 0, held: true };
        nodes.set(key, node);
        return node;
      }
      if (row === undefined) throw new Error(`node ${key} is missing in ${file}`);
      const bytes = rebuild(id);
      if (!isNode(bytes)) throw new Error(`object ${key} is not a node`);
      const node = { ...decode(key, bytes), stored: row.data.length, depth: row.depth };
      nodes.set(key, node);
      return node;
    };
    const roots = (
      db.prepare("SELECT root_id, root_node FROM journal ORDER BY sequence").all() as {
        root_id: Buffer;
        root_node: Buffer | null;
      }[]
    ).map((row) => {
      if (row.root_node !== null) held.set(row.root_id.toString("hex"), row.root_node);
      return row.root_id;
    });
    const seen = new Set<string>();
    const byLevel: Record<string, number> = {};
    let stored = 0;
    let wholeStored = 0;
    let fresh = 0;
    let deltas = 0;
    let deepest = 0;
    for (const root of roots) {
      const walk = (id: Buffer) => {
        const node = load(id);
        if (seen.has(node.key)) return;
        seen.add(node.key);
        const level = `level ${node.level}`;
        byLevel[level] = (byLevel[level] ?? 0) + node.length;
        stored += node.stored;
        fresh += 1;
        if (node.depth > 0) deltas += 1;
        else if (node.held !== true) wholeStored += node.stored;
        deepest = Math.max(deepest, node.depth);
        follow(node.level, node.entries);
      };
      // A held directory's bytes are its parent row's: only the rows below it are walked.
      const follow = (level: number, entries: readonly Entry[]) => {
        for (const entry of entries) {
          if (entry.held !== undefined) {
            const held = decode(entry.target.toString("hex"), entry.held);
            follow(held.level, held.entries);
          } else if (level > 0 || entry.isDirectory) walk(entry.target);
        }
      };
      walk(root);
    }
    const steps = Math.max(1, roots.length);
    const whole = db
      .prepare("SELECT coalesce(sum(size), 0) AS bytes FROM workspace_object WHERE kind = 0")
      .get() as { bytes: number };
    return {
      bytesByObject,
      nodeBytesPerStep: Object.fromEntries(
        Object.entries(byLevel)
          .sort(([a], [b]) => a.localeCompare(b))
          .map(([level, bytes]) => [level, Math.round(bytes / steps)]),
      ),
      // Every whole row that is not a node is a file's content.
      fileBytesPerStep: Math.round((whole.bytes - wholeStored) / steps),
      nodeBytesStoredPerStep: Math.round(stored / steps),
      deltaShare: Math.round((deltas / Math.max(1, fresh)) * 100) / 100,
      deepestChain: deepest,
    };
  } finally {
    db.close();
  }
}

/** A delta's operations (after its 32-byte base id) applied to its base's bytes. */
function applyDelta(base: Buffer, data: Buffer, size: number): Buffer {
  const out = Buffer.alloc(size);
  const at = { offset: 32 };
  let written = 0;
  while (at.offset < data.length) {
    const header = varint(data, at);
    const length = Math.floor(header / 2);
    if (header % 2 === 0) {
      data.copy(out, written, at.offset, at.offset + length);
      at.offset += length;
    } else {
      const from = varint(data, at);
      base.copy(out, written, from, from + length);
    }
    written += length;
  }
  if (written !== size) throw new Error("a delta does not rebuild its node");
  return out;
}

function isNode(data: Buffer): boolean {
  return data.length > DOMAIN.length && data.subarray(0, DOMAIN.length).equals(DOMAIN);
}

function decode(key: string, data: Buffer): Omit<Node, "stored" | "depth"> {
  const at = { offset: DOMAIN.length };
  const level = data[at.offset++]!;
  const count = varint(data, at);
  const entries: Entry[] = [];
  for (let i = 0; i < count; i++) {
    const kind = level === 0 ? data[at.offset++]! : 0;
    const length = varint(data, at);
    const name = data.toString("utf8", at.offset, at.offset + length);
    at.offset += length;
    const target = data.subarray(at.offset, at.offset + 32);
    at.offset += 32;
    let held: Buffer | undefined;
    if (level === 0 && kind !== DIRECTORY) {
      const size = varint(data, at);
      if (kind === INLINE_DIRECTORY) held = data.subarray(at.offset, at.offset + size);
      if (kind === INLINE_FILE || kind === INLINE_DIRECTORY) at.offset += size;
    }
    entries.push({
      name,
      isDirectory: level === 0 && (kind === DIRECTORY || kind === INLINE_DIRECTORY),
      target,
      ...(held === undefined ? {} : { held }),
    });
  }
  return { key, level, entries, length: data.length };
}

function varint(data: Buffer, at: { offset: number }): number {
  let value = 0;
  let shift = 0;
  for (;;) {
    const byte = data[at.offset++]!;
    value += (byte & 0x7f) * 2 ** shift;
    if (byte < 0x80) return value;
    shift += 7;
  }
}
