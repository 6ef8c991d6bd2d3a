/**
 * The loader every tree walk reads nodes through: nodes built by the
 * operation and not yet stored, then the store's node cache, then the
 * database — and roots, wherever the journal's events may hold them.
 */
import { sameBytes } from "../port/bytes.js";
import type { Executor } from "../port/driver.js";
import { RunledgerError } from "../port/errors.js";
import { idKey } from "./id-key.js";
import type { DirectoryNode, Item } from "./node.js";
import { decodeNode } from "./node.js";
import { readNodeBytes } from "./node-bytes.js";
import type { NodeCache } from "./node-cache.js";
import { EMPTY_NODE, EMPTY_ROOT_ID_BYTES } from "./node-encoding.js";
import type { JournalRoots } from "./root-journal.js";
import { readRootBytes } from "./roots.js";

/**
 * Where a root comes from: the journal, with the bytes its naming event
 * holds when they are at hand (`held`), or a caller who named it by its id
 * (`named`: the id as given, for messages).
 */
export type RootSource = { readonly held?: Uint8Array | undefined } | { readonly named: string };

/**
 * Puts a root's node at hand without reading: cached already, decoded from
 * `held` (the bytes its event holds), or the empty root, and cached. False
 * when none of these — the root is not held, or those bytes are not a node;
 * reading it is then the loader's (`NodeLoader.root`), which says why.
 */
export function holdRoot(cache: NodeCache, id: Uint8Array, held: Uint8Array | undefined): boolean {
  const key = idKey(id);
  if (cache.get(key) !== undefined) return true;
  const bytes = held ?? (sameBytes(id, EMPTY_ROOT_ID_BYTES) ? EMPTY_NODE.bytes : undefined);
  return cacheDecoded(cache, key, id, bytes) !== undefined;
}

/** `bytes` decoded as node `id` and cached under `key`; undefined, nothing cached, when they are not a node. */
function cacheDecoded(
  cache: NodeCache,
  key: string,
  id: Uint8Array,
  bytes: Uint8Array | undefined,
): DirectoryNode | undefined {
  const node = bytes === undefined ? undefined : decodeNode(id, bytes);
  if (node !== undefined) cache.set(key, node);
  return node;
}

/** Loads nodes from one database, through the cache, and from nodes built but not yet stored. */
export class NodeLoader {
  readonly #executor: Executor;
  readonly #cache: NodeCache;
  readonly #journal: JournalRoots | undefined;
  readonly #pending = new Map<string, DirectoryNode>();

  /**
   * `journal`: where a root held in its event is found; a loader without one
   * (tree work on nodes at hand) finds a root only as a stored node.
   */
  constructor(executor: Executor, cache: NodeCache, journal?: JournalRoots) {
    this.#executor = executor;
    this.#cache = cache;
    this.#journal = journal;
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
   * A root of this database (roots.ts). One the journal names is taken as
   * built or cached when it is, else decoded from the bytes its event holds
   * (`held`, when at hand), else read — stored, or held by the newest event
   * holding it — and is `corrupt` when nothing holds it. One a caller names
   * (`named`: its id as given) is always read from the database, since the
   * cache is shared by every run of a store and a root of one is not one of
   * another, and is `root_not_found` when this run holds no such root.
   */
  async root(id: Uint8Array, from: RootSource = {}): Promise<DirectoryNode> {
    const key = idKey(id);
    const named = "named" in from ? from.named : undefined;
    if (named === undefined) {
      const known = this.#knownBy(key);
      if (known !== undefined) return known;
      const held = "held" in from ? from.held : undefined;
      if (held !== undefined) return this.#decoded(key, id, held);
    }
    const stored = await readRootBytes(this.#executor, this.#journal, id);
    if (named !== undefined) return this.#decoded(key, id, stored.bytes, () => rootNotFound(named));
    if (stored.missing) throw missingNode();
    return this.#decoded(key, id, stored.bytes);
  }

  /** `bytes` decoded as node `id` and cached; `fail`'s error (default `corrupt`) when they are not a node. */
  #decoded(
    key: string,
    id: Uint8Array,
    bytes: Uint8Array | undefined,
    fail: () => RunledgerError = damagedNode,
  ): DirectoryNode {
    const node = cacheDecoded(this.#cache, key, id, bytes);
    if (node === undefined) throw fail();
    return node;
  }

  #knownBy(key: string): DirectoryNode | undefined {
    return this.#pending.get(key) ?? this.#cache.get(key);
  }
}

function missingNode(): RunledgerError {
  return new RunledgerError(
    "corrupt",
    "a directory node of the workspace is missing; run verify, then restore the run from a copy",
  );
}

function damagedNode(): RunledgerError {
  return new RunledgerError(
    "corrupt",
    "a stored directory node is not well-formed; run verify, then restore the run from a copy",
  );
}

function rootNotFound(hex: string): RunledgerError {
  return new RunledgerError("root_not_found", `no workspace root ${hex} in this run`, {
    details: { root: hex },
  });
}
