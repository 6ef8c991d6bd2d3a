/**
 * The loader every tree walk reads nodes through: nodes built by the
 * operation and not yet stored, then the store's node cache, then the
 * database — and roots, wherever the journal's events may hold them.
 */
import type { Executor } from "../port/driver.js";
import { RunledgerError } from "../port/errors.js";
import { idKey } from "./id-key.js";
import { type DirectoryNode, decodeNode, type Item } from "./node.js";
import { readNodeBytes } from "./node-bytes.js";
import type { NodeCache } from "./node-cache.js";
import { readRootBytes } from "./roots.js";

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
