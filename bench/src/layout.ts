/**
 * Where a run file's bytes go, and what storing nodes as changes would save.
 *
 * The growing workload keeps every version of its directory: each step's
 * root reaches a new leaf and a new node on every level above it, and the
 * journal retains them all. `layoutOf` reads a finished run file and says
 * how many bytes each table and index holds (SQLite's dbstat), how many
 * bytes of directory nodes each step added, by level, and — as an
 * estimate, since v1 stores every node whole — how many those nodes would
 * take stored as their changes to the node they replaced: a reference to
 * that node (its 32-byte id and a depth byte), then each new entry, and two
 * bytes per run of entries dropped; a node is stored whole when that is
 * smaller or when its chain of changes would exceed MAX_CHAIN. The file
 * format is read here independently of core (docs/file-format.md), as a
 * reader of the file would.
 */
import Database from "better-sqlite3";

/** The estimate's bound on a chain of changes (a read loads at most this many more rows). */
export const MAX_CHAIN = 16;
const DOMAIN = Buffer.from("runledger/node/1\u0000", "utf8");
const DIRECTORY = 2;
const INLINE_FILE = 3;

export interface Layout {
  /** SQLite's pages per table and index, in bytes. */
  readonly bytesByObject: Readonly<Record<string, number>>;
  /** Bytes of directory nodes the run's roots reached first at each step, by level, per step. */
  readonly nodeBytesPerStep: Readonly<Record<string, number>>;
  /** Bytes of file content stored as rows of their own, per step. */
  readonly fileBytesPerStep: number;
  /** The same new nodes stored as changes to the nodes they replaced (estimate), per step. */
  readonly nodeBytesAsChangesPerStep: number;
}

interface Entry {
  readonly name: string;
  readonly isDirectory: boolean;
  readonly target: Buffer;
  /** The entry's encoded bytes, as a comparable string. */
  readonly raw: string;
}

interface Node {
  readonly key: string;
  readonly level: number;
  readonly entries: readonly Entry[];
  readonly length: number;
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
      "SELECT kind, data FROM workspace_object WHERE substr(id, 1, 8) = ? AND id = ?",
    );
    const nodes = new Map<string, Node>();
    const load = (id: Buffer): Node => {
      const key = id.toString("hex");
      const known = nodes.get(key);
      if (known !== undefined) return known;
      const row = read.get(id.subarray(0, 8), id) as { kind: number; data: Buffer } | undefined;
      if (row === undefined || row.kind !== 0 || !isNode(row.data)) {
        throw new Error(`node ${key} is not stored whole in ${file}`);
      }
      const node = decode(key, row.data);
      nodes.set(key, node);
      return node;
    };
    const roots = (
      db.prepare("SELECT root_id FROM journal ORDER BY sequence").all() as { root_id: Buffer }[]
    ).map((row) => row.root_id);
    const seen = new Set<string>();
    const depth = new Map<string, number>();
    const byLevel: Record<string, number> = {};
    let asChanges = 0;
    let previous: Buffer | undefined;
    for (const root of roots) {
      const fresh: { node: Node; directory: string[] }[] = [];
      const walk = (id: Buffer, directory: string[]) => {
        const node = load(id);
        if (seen.has(node.key)) return;
        seen.add(node.key);
        fresh.push({ node, directory });
        for (const entry of node.entries) {
          if (node.level > 0) walk(entry.target, directory);
          else if (entry.isDirectory) walk(entry.target, [...directory, entry.name]);
        }
      };
      walk(root, []);
      for (const { node, directory } of fresh) {
        const level = `level ${node.level}`;
        byLevel[level] = (byLevel[level] ?? 0) + node.length;
        const first = node.entries[0]?.name ?? "";
        const base = previous && covering(load, previous, directory, node.level, first);
        let cost = node.length;
        depth.set(node.key, 0);
        const chain = base === undefined ? 0 : (depth.get(base.key) ?? 0) + 1;
        if (base !== undefined && base.key !== node.key && chain <= MAX_CHAIN) {
          const changes = changeBytes(base, node);
          if (changes < cost) {
            cost = changes;
            depth.set(node.key, chain);
          }
        }
        asChanges += cost;
      }
      previous = root;
    }
    const steps = Math.max(1, roots.length);
    const files = db
      .prepare("SELECT coalesce(sum(size), 0) AS bytes FROM workspace_object WHERE kind = 0")
      .get() as { bytes: number };
    const nodeTotal = Object.values(byLevel).reduce((sum, bytes) => sum + bytes, 0);
    return {
      bytesByObject,
      nodeBytesPerStep: Object.fromEntries(
        Object.entries(byLevel)
          .sort(([a], [b]) => a.localeCompare(b))
          .map(([level, bytes]) => [level, Math.round(bytes / steps)]),
      ),
      // Every kind-0 row that is not a node is a file's content.
      fileBytesPerStep: Math.round((files.bytes - nodeTotal) / steps),
      nodeBytesAsChangesPerStep: Math.round(asChanges / steps),
    };
  } finally {
    db.close();
  }
}

/** The node of `level` in `directory` (names from the top) of `root` whose range holds `name`. */
function covering(
  load: (id: Buffer) => Node,
  root: Buffer,
  directory: readonly string[],
  level: number,
  name: string,
): Node | undefined {
  let node = load(root);
  for (const segment of directory) {
    node = descend(load, node, 0, segment);
    const entry = node.entries.find((e) => e.name === segment && e.isDirectory);
    if (entry === undefined) return undefined;
    node = load(entry.target);
  }
  if (node.level < level) return undefined;
  return descend(load, node, level, name);
}

function descend(load: (id: Buffer) => Node, top: Node, level: number, name: string): Node {
  let node = top;
  while (node.level > level) {
    let at = 0;
    while (
      at + 1 < node.entries.length &&
      Buffer.compare(utf(node.entries[at + 1]!.name), utf(name)) <= 0
    ) {
      at += 1;
    }
    node = load(node.entries[at]!.target);
  }
  return node;
}

/** The estimated size of `node` stored as its changes to `base`. */
function changeBytes(base: Node, node: Node): number {
  const had = new Set(base.entries.map((entry) => entry.raw));
  const kept = new Set(node.entries.map((entry) => entry.raw));
  // The base's id and the chain depth, the level, the entry count.
  let bytes = 32 + 1 + 1 + 2;
  for (const entry of node.entries) if (!had.has(entry.raw)) bytes += 1 + entry.raw.length;
  let dropping = false;
  for (const entry of base.entries) {
    const dropped = !kept.has(entry.raw);
    if (dropped && !dropping) bytes += 2;
    dropping = dropped;
  }
  return bytes;
}

function isNode(data: Buffer): boolean {
  return data.length > DOMAIN.length && data.subarray(0, DOMAIN.length).equals(DOMAIN);
}

function decode(key: string, data: Buffer): Node {
  const at = { offset: DOMAIN.length };
  const level = data[at.offset++]!;
  const count = varint(data, at);
  const entries: Entry[] = [];
  for (let i = 0; i < count; i++) {
    const start = at.offset;
    const kind = level === 0 ? data[at.offset++]! : 0;
    const length = varint(data, at);
    const name = data.toString("utf8", at.offset, at.offset + length);
    at.offset += length;
    const target = data.subarray(at.offset, at.offset + 32);
    at.offset += 32;
    if (level === 0 && kind !== DIRECTORY) {
      const size = varint(data, at);
      if (kind === INLINE_FILE) at.offset += size;
    }
    entries.push({
      name,
      isDirectory: level === 0 && kind === DIRECTORY,
      target,
      raw: data.toString("latin1", start, at.offset),
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

function utf(text: string): Buffer {
  return Buffer.from(text, "utf8");
}
