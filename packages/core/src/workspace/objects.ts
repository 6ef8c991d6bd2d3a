/**
 * The object store: every directory node and every file's content is one
 * row of `workspace_object`, addressed by a SHA-256 — a node by the hash of
 * its bytes, a file by the hash of its content (so `sha256sum` agrees with a
 * file's digest). A file larger than CHUNK_SIZE keeps only its chunk list in
 * that row; its bytes are in `workspace_chunk` (see files.ts).
 *
 * Objects never change once written, so a node read once can be kept: the
 * node cache is shared by every lease of a store and keyed by id alone. A
 * cached node is only ever reached from a root the database holds (reads
 * name a root; writes start from the current one, which SQLite checks when
 * the new root is published), so the cache can never stand in for a row
 * the database lacks.
 */
import { toHex } from "../port/bytes.js";
import type { Executor } from "../port/driver.js";
import { RunledgerError } from "../port/errors.js";
import type { HashFunctions } from "../port/hash.js";
import { placeholders, ROWS_PER_STATEMENT } from "../port/placeholders.js";
import { applyDelta, encodeDelta, MAX_CHAIN } from "./delta.js";
import { type DirectoryNode, decodeNode, type Item } from "./node.js";
import { OBJECT_BY_ID, objectIdEquals, objectKey } from "./object-key.js";
import { heldRoot } from "./roots.js";

/** What workspace reads and writes share, per store: the node cache, and the hash for writing. */
export interface WorkspaceContext {
  readonly nodes: NodeCache;
  readonly hash: HashFunctions;
}

/**
 * `kind` of a row: its data is the content itself, the content's chunk
 * list, or (a directory node only) a delta onto a base node (delta.ts).
 */
export const BYTES = 0;
export const CHUNK_LIST = 1;
export const DELTA = 2;

/** A row of `workspace_object` waiting to be written. */
export interface ObjectRow {
  readonly id: Uint8Array;
  readonly kind: typeof BYTES | typeof CHUNK_LIST;
  readonly size: number;
  readonly data: Uint8Array;
  /**
   * A node may instead be stored as this delta (base id first), when SQLite
   * finds the base stored less than MAX_CHAIN deep.
   */
  readonly delta?: Uint8Array;
}

const LOAD = `SELECT kind, size, depth, data FROM workspace_object WHERE ${OBJECT_BY_ID}`;
/** Rows stored whole: id, kind, size, data. */
const wholeSql = (rows: number) =>
  `INSERT INTO workspace_object (id, kind, size, data) VALUES ${placeholders(rows, 4)}`;
/**
 * Rows some of which propose a delta: id, kind, size, whole data, then the
 * delta's base id and data (or nulls). The representation is chosen here,
 * from the base row as stored: a delta only onto a base that is present and
 * less than MAX_CHAIN deep, one deeper than it; otherwise the whole node.
 */
const proposingSql = (rows: number) =>
  `INSERT INTO workspace_object (id, kind, size, depth, data)
SELECT v.column1,
  iif(b.depth < ${MAX_CHAIN}, ${DELTA}, v.column2),
  v.column3,
  iif(b.depth < ${MAX_CHAIN}, b.depth + 1, 0),
  iif(b.depth < ${MAX_CHAIN}, v.column6, v.column4)
FROM (VALUES ${placeholders(rows, 6)}) AS v
LEFT JOIN workspace_object AS b ON ${objectIdEquals("b.id", "v.column5")}`;
const WHOLE_SQL = Array.from({ length: ROWS_PER_STATEMENT + 1 }, (_, n) =>
  n === 0 ? "" : wholeSql(n),
);
const PROPOSING_SQL = Array.from({ length: ROWS_PER_STATEMENT + 1 }, (_, n) =>
  n === 0 ? "" : proposingSql(n),
);

/**
 * Writes rows not yet stored: one statement per 64 rows. The schema's
 * trigger skips a row whose id is already present (earlier rows of the same
 * statement included), leaving the stored row as it is. Nothing of the
 * answer is read, so a driver may send them later (port/driver.ts).
 */
export async function insertObjects(executor: Executor, rows: readonly ObjectRow[]): Promise<void> {
  for (let start = 0; start < rows.length; start += ROWS_PER_STATEMENT) {
    const batch = rows.slice(start, start + ROWS_PER_STATEMENT);
    const params: (Uint8Array | number | null)[] = [];
    if (batch.every((row) => row.delta === undefined)) {
      for (const row of batch) params.push(row.id, row.kind, row.size, row.data);
      await executor.execute(WHOLE_SQL[batch.length]!, params, LATER);
      continue;
    }
    for (const row of batch) {
      const delta = row.delta;
      params.push(
        row.id,
        row.kind,
        row.size,
        row.data,
        delta === undefined ? null : delta.subarray(0, 32),
        delta ?? null,
      );
    }
    await executor.execute(PROPOSING_SQL[batch.length]!, params, LATER);
  }
}

const LATER = { later: true } as const;

/** A stored node's bytes, or why there are none: no row at all, or a damaged row or chain. */
export type StoredNode =
  | { readonly bytes: Uint8Array; readonly missing?: undefined; readonly damage?: undefined }
  | { readonly missing: true; readonly bytes?: undefined; readonly damage?: undefined }
  | { readonly damage: string; readonly bytes?: undefined; readonly missing?: undefined };

/**
 * Nodes already rebuilt by one reader, so that a chain is rebuilt from the
 * nearest of them instead of from its whole node (verify reads every delta
 * of a run, each usually onto the one before it). Holds at most `limit`
 * nodes, oldest out first. Rebuilding is a function of the rows alone, so a
 * node taken from here is what reading its rows again would give — its
 * depth is kept too, for the check that a chain always descends.
 */
export class RebuiltNodes {
  readonly #limit: number;
  readonly #nodes = new Map<string, { readonly bytes: Uint8Array; readonly depth: number }>();

  constructor(limit = 4096) {
    this.#limit = limit;
  }

  get(id: Uint8Array): { readonly bytes: Uint8Array; readonly depth: number } | undefined {
    return this.#nodes.get(idKey(id));
  }

  set(id: Uint8Array, bytes: Uint8Array, depth: number): void {
    this.#nodes.set(idKey(id), { bytes, depth });
    if (this.#nodes.size > this.#limit) {
      this.#nodes.delete(this.#nodes.keys().next().value as string);
    }
  }
}

/**
 * Reads a stored node's bytes, following a delta chain down to its whole
 * node (at most MAX_CHAIN rows below it, each strictly shallower than the
 * one above) and rebuilding upwards. With `rebuilt`, the walk stops at the
 * first node found there, and every node it rebuilds is added.
 */
export async function readNodeBytes(
  executor: Executor,
  id: Uint8Array,
  rebuilt?: RebuiltNodes,
): Promise<StoredNode> {
  const chain: ChainLink[] = [];
  let at = id;
  let above = MAX_CHAIN + 1;
  for (;;) {
    const known = rebuilt?.get(at);
    if (known !== undefined) {
      if (known.depth >= above) return { damage: "a delta chain is not well-formed" };
      return rebuild(known.bytes, chain, rebuilt);
    }
    const row = (await executor.execute(LOAD, objectKey(at))).rows[0];
    if (row === undefined) {
      return chain.length === 0 ? { missing: true } : { damage: "the base of a delta is missing" };
    }
    const kind = Number(row.kind);
    const data = row.data as Uint8Array;
    if (kind === BYTES) {
      rebuilt?.set(at, data, 0);
      return rebuild(data, chain, rebuilt);
    }
    const depth = Number(row.depth);
    if (kind !== DELTA || depth < 1 || depth >= above || data.length <= 32) {
      return { damage: kind === DELTA ? "a delta chain is not well-formed" : "not a node" };
    }
    chain.push({ id: at, data, size: Number(row.size), depth });
    above = depth;
    at = data.subarray(0, 32);
  }
}

/**
 * A root's bytes: as a stored node, else as the newest journal event holding
 * it (roots.ts). Only a root may be found there; any other node is a row.
 */
export async function readRootBytes(executor: Executor, id: Uint8Array): Promise<StoredNode> {
  const stored = await readNodeBytes(executor, id);
  if (!stored.missing) return stored;
  const held = await heldRoot(executor, id);
  return held === undefined ? stored : { bytes: held };
}

/** A delta row met on the way down a chain: its node's id, its data, the node's size, its depth. */
interface ChainLink {
  readonly id: Uint8Array;
  readonly data: Uint8Array;
  readonly size: number;
  readonly depth: number;
}

/** Applies a chain's deltas, deepest base first, onto `base`'s bytes. */
function rebuild(
  base: Uint8Array,
  chain: readonly ChainLink[],
  rebuilt: RebuiltNodes | undefined,
): StoredNode {
  let bytes = base;
  for (let i = chain.length - 1; i >= 0; i--) {
    const link = chain[i]!;
    const next = applyDelta(bytes, link.data, link.size);
    if (next === undefined) return { damage: "a delta does not rebuild its node" };
    rebuilt?.set(link.id, next, link.depth);
    bytes = next;
  }
  return { bytes };
}

/**
 * Decoded nodes by id, least recently used first out. A node built here is
 * kept with its bytes, so that its next edit copies its unchanged entries
 * from them (node.ts, `encodeNode`); the bytes of at most BYTES_KEPT bytes'
 * worth of nodes are kept, the longest kept dropped first (the node stays,
 * without them), so a process that writes many large directories does not
 * hold each of their nodes twice.
 */
export class NodeCache {
  static readonly BYTES_KEPT = 4 * 1024 * 1024;
  readonly #limit: number;
  readonly #bytesKept: number;
  readonly #nodes = new Map<string, DirectoryNode>();
  /** The keys of the nodes kept with their bytes, longest kept first, and those bytes' length. */
  readonly #withBytes = new Map<string, number>();
  #bytes = 0;

  constructor(limit = 8192, bytesKept = NodeCache.BYTES_KEPT) {
    this.#limit = limit;
    this.#bytesKept = bytesKept;
  }

  get(key: string): DirectoryNode | undefined {
    const node = this.#nodes.get(key);
    if (node !== undefined) {
      this.#nodes.delete(key);
      this.#nodes.set(key, node);
    }
    return node;
  }

  set(key: string, node: DirectoryNode): void {
    // The node it replaced is not kept, or each version would keep the one before alive.
    const kept = node.base === undefined ? node : withoutBase(node);
    this.#forgetBytes(key);
    this.#nodes.set(key, kept);
    if (kept.bytes !== undefined) {
      this.#withBytes.set(key, kept.bytes.length);
      this.#bytes += kept.bytes.length;
      while (this.#bytes > this.#bytesKept) {
        const oldest = this.#withBytes.keys().next().value as string;
        const held = this.#nodes.get(oldest)!;
        this.#forgetBytes(oldest);
        this.#nodes.set(oldest, { id: held.id, level: held.level, items: held.items });
      }
    }
    if (this.#nodes.size > this.#limit) {
      const oldest = this.#nodes.keys().next().value as string;
      this.#forgetBytes(oldest);
      this.#nodes.delete(oldest);
    }
  }

  /**
   * Keeps the nodes an edit built and lets go of the ones they replaced (each
   * built node's `base`): those are read again only through an old root, and
   * held here they would fill the cache with dead versions — one per step —
   * that every young-generation collection copies while they stay alive.
   */
  replace(built: readonly DirectoryNode[]): void {
    for (const node of built) {
      if (node.base === undefined) continue;
      const key = idKey(node.base.id);
      this.#forgetBytes(key);
      this.#nodes.delete(key);
    }
    for (const node of built) this.set(idKey(node.id), node);
  }

  /** Bytes of nodes kept, in all (at most the budget given). */
  get bytesKept(): number {
    return this.#bytes;
  }

  #forgetBytes(key: string): void {
    const length = this.#withBytes.get(key);
    if (length === undefined) return;
    this.#withBytes.delete(key);
    this.#bytes -= length;
  }
}

function withoutBase(node: DirectoryNode): DirectoryNode {
  const { id, level, items, bytes, offsets } = node;
  if (bytes === undefined || offsets === undefined) return { id, level, items };
  return { id, level, items, bytes, offsets };
}

/**
 * A compact Map key for an id: a 32-byte id (every id keyed: node ids, file
 * digests, piece addresses) as 16 UTF-16 code units, two bytes each, built
 * without an intermediate array. Any other length is keyed by "#" and its hex
 * form, an odd length, so it can never equal a 32-byte id's key.
 */
export function idKey(id: Uint8Array): string {
  if (id.length !== 32) return `#${toHex(id)}`;
  return String.fromCharCode(
    (id[0]! << 8) | id[1]!,
    (id[2]! << 8) | id[3]!,
    (id[4]! << 8) | id[5]!,
    (id[6]! << 8) | id[7]!,
    (id[8]! << 8) | id[9]!,
    (id[10]! << 8) | id[11]!,
    (id[12]! << 8) | id[13]!,
    (id[14]! << 8) | id[15]!,
    (id[16]! << 8) | id[17]!,
    (id[18]! << 8) | id[19]!,
    (id[20]! << 8) | id[21]!,
    (id[22]! << 8) | id[23]!,
    (id[24]! << 8) | id[25]!,
    (id[26]! << 8) | id[27]!,
    (id[28]! << 8) | id[29]!,
    (id[30]! << 8) | id[31]!,
  );
}

/** Loads nodes from one database, through the cache, and from nodes built but not yet stored. */
export class NodeLoader {
  readonly #executor: Executor;
  readonly #cache: NodeCache;
  readonly #pending = new Map<string, DirectoryNode>();

  constructor(executor: Executor, cache: NodeCache) {
    this.#executor = executor;
    this.#cache = cache;
  }

  /** Remembers a node built in this operation, so that it can be read before it is stored. */
  add(node: DirectoryNode): void {
    this.#pending.set(idKey(node.id), node);
  }

  /** Nodes built in this operation, in the order they were built (children first). */
  pending(): DirectoryNode[] {
    return [...this.#pending.values()];
  }

  /** The node with this id built in this operation, if one was. */
  built(id: Uint8Array): DirectoryNode | undefined {
    return this.#pending.get(idKey(id));
  }

  /** A node built in this operation or cached, without asking the database; undefined otherwise. */
  known(id: Uint8Array): DirectoryNode | undefined {
    return this.#knownBy(idKey(id));
  }

  /** A directory entry's top node: the one the entry holds, else the row it names. */
  directory(item: Item): DirectoryNode | Promise<DirectoryNode> {
    return item.node ?? this.load(item.target);
  }

  async load(id: Uint8Array): Promise<DirectoryNode> {
    const key = idKey(id);
    const known = this.#knownBy(key);
    if (known !== undefined) return known;
    const stored = await readNodeBytes(this.#executor, id);
    if (stored.missing) throw missingNode();
    return this.#decoded(key, id, stored.bytes);
  }

  /**
   * A root of this database, as the journal names it (roots.ts): from
   * `held`, its node as the naming event holds it, when given; else as a
   * node cached, built or stored; else from the newest event holding it.
   */
  async root(id: Uint8Array, held?: Uint8Array): Promise<DirectoryNode> {
    const key = idKey(id);
    const known = this.#knownBy(key);
    if (known !== undefined) return known;
    if (held !== undefined) return this.#decoded(key, id, held);
    const stored = await readRootBytes(this.#executor, id);
    if (stored.missing) throw missingNode();
    return this.#decoded(key, id, stored.bytes);
  }

  /** `bytes` decoded as node `id` and cached; `corrupt` when they are not a node. */
  #decoded(key: string, id: Uint8Array, bytes: Uint8Array | undefined): DirectoryNode {
    const node = bytes === undefined ? undefined : decodeNode(id, bytes);
    if (node === undefined) {
      throw new RunledgerError(
        "corrupt",
        "a stored directory node is not well-formed; run verify, then restore the run from a copy",
      );
    }
    this.#cache.set(key, node);
    return node;
  }

  #knownBy(key: string): DirectoryNode | undefined {
    return this.#pending.get(key) ?? this.#cache.get(key);
  }

  /**
   * Loads a node that a caller names as a root; `root_not_found` when this
   * database holds no such node. Always asked of the database: the cache is
   * shared by every run of a store, and a root of one is not one of another.
   */
  async loadRoot(id: Uint8Array, hex: string): Promise<DirectoryNode> {
    const key = idKey(id);
    const { bytes } = await readRootBytes(this.#executor, id);
    const node = bytes === undefined ? undefined : decodeNode(id, bytes);
    if (node === undefined) {
      throw new RunledgerError("root_not_found", `no workspace root ${hex} in this run`, {
        details: { root: hex },
      });
    }
    this.#cache.set(key, node);
    return node;
  }
}

function missingNode(): RunledgerError {
  return new RunledgerError(
    "corrupt",
    "a directory node of the workspace is missing; run verify, then restore the run from a copy",
  );
}

/**
 * Every directory node `roots` reach, each stored node once: `load` reads it
 * the first time its id comes up, and `seen` (keyed by idKey) remembers it.
 * A directory held in its entry has no row — it is reached through its
 * parent, neither loaded nor remembered — but what it names is walked on.
 * The caller handles each node's files.
 */
export async function* reachedNodes(
  roots: readonly Uint8Array[],
  load: (id: Uint8Array) => Promise<DirectoryNode>,
  seen: Set<string>,
): AsyncGenerator<DirectoryNode> {
  const pending: (Uint8Array | DirectoryNode)[] = [...roots];
  while (pending.length > 0) {
    const next = pending.pop()!;
    let node = next as DirectoryNode;
    if (next instanceof Uint8Array) {
      const key = idKey(next);
      if (seen.has(key)) continue;
      seen.add(key);
      node = await load(next);
    }
    for (const item of node.items) if (item.kind !== "file") pending.push(item.node ?? item.target);
    yield node;
  }
}

/** The rows for nodes built in one operation: each whole, or as a delta onto the node it replaced. */
export function nodeRows(nodes: readonly DirectoryNode[]): ObjectRow[] {
  const rows: ObjectRow[] = [];
  for (const node of nodes) {
    const bytes = node.bytes;
    if (bytes === undefined) continue;
    const delta = node.base === undefined ? undefined : encodeDelta(node.base, node);
    rows.push(
      delta === undefined
        ? { id: node.id, kind: BYTES, size: bytes.length, data: bytes }
        : { id: node.id, kind: BYTES, size: bytes.length, data: bytes, delta },
    );
  }
  return rows;
}
