/**
 * What changed between two roots: the files added, removed or modified, in
 * path order. Both trees are walked together, node by node: a child node or a
 * directory whose id is the same on both sides holds the same entries, so it
 * is passed over without being read. Because node boundaries depend only on
 * the entries (node.ts), the two sides of an unchanged run of entries are the
 * same nodes, and a change to one file of a large tree reads the nodes on its
 * path and their neighbours: O(changed entries × depth), not the tree.
 *
 * Only files are reported: a directory added or removed is each of its files
 * added or removed, and a file replaced by a directory of the same name (or
 * the reverse) is a removal and additions.
 */
import { sameBytes, toHex } from "../port/bytes.js";
import { compareNames, type DirectoryNode, type Item } from "./node.js";
import type { NodeLoader } from "./node-loader.js";
import { entries } from "./trees.js";

/** A file as one side of a change shows it. */
export interface DiffFile {
  readonly kind: "file";
  readonly size: number;
  /** The content's SHA-256 (hex). */
  readonly digest: string;
}

/** One changed file: `before` is absent for an added file, `after` for a removed one. */
export interface WorkspaceChange {
  readonly path: string;
  readonly change: "added" | "removed" | "modified";
  readonly before?: DiffFile;
  readonly after?: DiffFile;
}

/** The changes from the tree at `from` to the tree at `to`, both top nodes, in path order. */
export async function* diffTrees(
  loader: NodeLoader,
  from: DirectoryNode,
  to: DirectoryNode,
  prefix = "",
): AsyncGenerator<WorkspaceChange> {
  if (sameBytes(from.id, to.id)) return;
  const left = new Cursor(loader, from);
  const right = new Cursor(loader, to);
  for (;;) {
    // Equal child nodes at the heads of both sides hold the same entries: passed over, unread.
    await left.align(right);
    const a = left.head;
    const b = right.head;
    if (a === undefined && b === undefined) return;
    const order = a === undefined ? 1 : b === undefined ? -1 : compareNames(a.name, b.name);
    if (order < 0) {
      yield* every(loader, a!, prefix, "removed");
      left.next();
    } else if (order > 0) {
      yield* every(loader, b!, prefix, "added");
      right.next();
    } else {
      yield* changed(loader, a!, b!, prefix);
      left.next();
      right.next();
    }
  }
}

/** Two entries of one name. */
async function* changed(
  loader: NodeLoader,
  a: Item,
  b: Item,
  prefix: string,
): AsyncGenerator<WorkspaceChange> {
  if (a.kind === "directory" && b.kind === "directory") {
    if (sameBytes(a.target, b.target)) return;
    yield* diffTrees(
      loader,
      await loader.directory(a),
      await loader.directory(b),
      `${prefix}${a.name}/`,
    );
    return;
  }
  if (a.kind === "file" && b.kind === "file") {
    if (sameBytes(a.target, b.target)) return;
    yield { path: prefix + a.name, change: "modified", before: file(a), after: file(b) };
    return;
  }
  // A file became a directory, or a directory a file: in path order, "x" before "x/…".
  if (a.kind === "file") {
    yield* every(loader, a, prefix, "removed");
    yield* every(loader, b, prefix, "added");
  } else {
    yield* every(loader, b, prefix, "added");
    yield* every(loader, a, prefix, "removed");
  }
}

/** An entry's files, each reported as `change`. */
async function* every(
  loader: NodeLoader,
  item: Item,
  prefix: string,
  change: "added" | "removed",
): AsyncGenerator<WorkspaceChange> {
  const path = prefix + item.name;
  if (item.kind === "file") {
    yield change === "added"
      ? { path, change, after: file(item) }
      : { path, change, before: file(item) };
    return;
  }
  for await (const entry of entries(loader, await loader.directory(item))) {
    yield* every(loader, entry, `${path}/`, change);
  }
}

/**
 * One side of the walk: the entries of a directory still to visit, as a
 * stack of runs — a run of a node's items, each either an entry (level 0) or
 * a child node not read yet.
 */
class Cursor {
  readonly #loader: NodeLoader;
  readonly #stack: { readonly items: readonly Item[]; index: number; readonly level: number }[];

  constructor(loader: NodeLoader, top: DirectoryNode) {
    this.#loader = loader;
    this.#stack = [{ items: top.items, index: 0, level: top.level }];
  }

  /** The item at the head (an entry once aligned), or undefined at the end. */
  get head(): Item | undefined {
    this.#popEmpty();
    const run = this.#stack.at(-1);
    return run?.items[run.index];
  }

  /** The level of the node whose item is at the head: 0 for an entry. */
  get level(): number {
    this.#popEmpty();
    return this.#stack.at(-1)?.level ?? 0;
  }

  next(): void {
    this.#popEmpty();
    const run = this.#stack.at(-1);
    if (run !== undefined) run.index++;
  }

  /**
   * Brings both heads to entries, passing over every pair of equal child
   * nodes met on the way; the side whose head is the higher node is read first.
   */
  async align(other: Cursor): Promise<void> {
    for (;;) {
      const a = this.head;
      const b = other.head;
      const levelA = a === undefined ? 0 : this.level;
      const levelB = b === undefined ? 0 : other.level;
      if (levelA === 0 && levelB === 0) return;
      if (levelA > 0 && levelA === levelB && sameBytes(a!.target, b!.target)) {
        this.next();
        other.next();
      } else if (levelA >= levelB) {
        await this.#expand();
      } else {
        await other.#expand();
      }
    }
  }

  /** Replaces the child node at the head with its items. */
  async #expand(): Promise<void> {
    const run = this.#stack.at(-1)!;
    const child = run.items[run.index]!;
    run.index++;
    const node = await this.#loader.load(child.target);
    this.#stack.push({ items: node.items, index: 0, level: node.level });
  }

  #popEmpty(): void {
    while (this.#stack.length > 1) {
      const run = this.#stack.at(-1)!;
      if (run.index < run.items.length) return;
      this.#stack.pop();
    }
  }
}

function file(item: Item): DiffFile {
  return { kind: "file", size: item.size, digest: toHex(item.target) };
}
