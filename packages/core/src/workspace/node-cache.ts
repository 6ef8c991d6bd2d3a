/**
 * The node cache. Objects never change once written, so a node read once
 * can be kept: the cache is shared by every lease of a store and keyed by id
 * alone. A cached node is only ever reached from a root the database holds
 * (reads name a root; writes start from the current one, which SQLite checks
 * when the new root is published), so the cache can never stand in for a
 * row the database lacks.
 */
import { idKey } from "./id-key.js";
import type { DirectoryNode } from "./node.js";

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
  /**
   * The key last added to `#nodes` (by `set`, or moved there by `get`): the
   * last in its order while it is still there.
   */
  #newest: string | undefined;

  constructor(limit = 8192, bytesKept = NodeCache.BYTES_KEPT) {
    this.#limit = limit;
    this.#bytesKept = bytesKept;
  }

  get(key: string): DirectoryNode | undefined {
    const node = this.#nodes.get(key);
    // The newest is kept longest already: a step reads the root the one before it kept.
    if (node !== undefined && key !== this.#newest) {
      this.#nodes.delete(key);
      this.#nodes.set(key, node);
      this.#newest = key;
    }
    return node;
  }

  set(key: string, node: DirectoryNode): void {
    // The node it replaced is not kept, or each version would keep the one before alive.
    const kept = node.base === undefined ? node : withoutBase(node);
    this.#forgetBytes(key);
    const before = this.#nodes.size;
    this.#nodes.set(key, kept);
    // A key new to the map goes last; one already there keeps its place.
    if (this.#nodes.size > before) this.#newest = key;
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
