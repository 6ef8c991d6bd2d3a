/**
 * Directory operations on prolly trees (see node.ts for the format): find a
 * name, list in order, and edit — replace the few nodes an edit reaches and
 * keep every other node as it is.
 *
 * An edit re-chunks a *window*: the run of nodes at one level from the one
 * holding the first change to the one holding the last. Where the new chunks
 * end exactly where an old node ended, everything to the right is unchanged
 * (node boundaries depend only on the entries since the previous boundary);
 * otherwise the window takes in the next old node and goes on. The nodes the
 * window replaced become a change one level up, until the top. Putting one
 * name into a directory of n entries so rewrites about one node per level:
 * O(log n) rows.
 *
 * The functions that may need a stored node are NodeWork generators (see
 * node-work.ts): they run without a promise while every node is at hand.
 */
import type { HashFunctions } from "../port/hash.js";
import { baseFor } from "./delta.js";
import { compareNames, type DirectoryNode, type Item, isCut, MAX_NODE_ENTRIES } from "./node.js";
import { EMPTY_NODE, encodeNode } from "./node-encoding.js";
import type { NodeLoader } from "./node-loader.js";
import { type NodeWork, settle } from "./node-work.js";

/** One step of a path from a directory's top node down: the node, and the child taken in it. */
interface Step {
  readonly node: DirectoryNode;
  index: number;
}
type Path = Step[];

/** A name's entry in a directory, or undefined; a promise only when a node must be read. */
export function lookup(
  loader: NodeLoader,
  top: DirectoryNode,
  name: string,
): Item | undefined | Promise<Item | undefined> {
  return settle(loader, lookupWork(loader, top, name));
}

/** `lookup` as NodeWork. */
export function* lookupWork(
  loader: NodeLoader,
  top: DirectoryNode,
  name: string,
): NodeWork<Item | undefined> {
  let node = top;
  while (node.level > 0) {
    const id = node.items[childFor(node, name)]!.target;
    node = loader.known(id) ?? (yield id);
  }
  return leafEntry(node.items, name);
}

/** A name's entry among a leaf's entries (in name order), or undefined. */
export function leafEntry(items: readonly Item[], name: string): Item | undefined {
  const item = items[lowerBound(items, name)];
  return item !== undefined && item.name === name ? item : undefined;
}

/** Every entry of a directory in name order, one node at a time. */
export async function* entries(loader: NodeLoader, top: DirectoryNode): AsyncGenerator<Item> {
  if (top.level === 0) {
    yield* top.items;
    return;
  }
  for (const child of top.items) yield* entries(loader, await loader.load(child.target));
}

/** A change to one name: its new entry, or null to delete it. */
export type Change = readonly [name: string, item: Item | null];

/**
 * Applies changes (in name order, one per name) to a directory and returns
 * its new top node; every node built is remembered by `loader` (`pending`).
 * A delete of a name that is not there is the caller's to refuse first.
 * A promise only when a node must be read.
 */
export function editDirectory(
  loader: NodeLoader,
  hash: HashFunctions,
  top: DirectoryNode,
  changes: readonly Change[],
): DirectoryNode | Promise<DirectoryNode> {
  return settle(loader, editWork(loader, hash, top, changes));
}

/** `editDirectory` as NodeWork. */
export function* editWork(
  loader: NodeLoader,
  hash: HashFunctions,
  top: DirectoryNode,
  changes: readonly Change[],
): NodeWork<DirectoryNode> {
  if (changes.length === 0) return top;
  // The old nodes of the level being rebuilt: a new node may be stored as a delta onto one.
  let oldNodes: DirectoryNode[] = [];
  const build = (level: number, items: Item[]) => {
    const base = level === oldNodes[0]?.level ? baseFor(oldNodes, items) : undefined;
    const built = encodeNode(level, items, hash, base);
    loader.add(built);
    return built;
  };
  let start = yield* descend(loader, top, changes[0]![0]);
  const end = changes.length === 1 ? start : yield* descend(loader, top, changes.at(-1)![0]);
  // Level 0: the window's entries with the changes merged in.
  let window = yield* collect(loader, start, end);
  oldNodes = window.nodes;
  let items = merge(window.items, changes);
  const firstChange = lowerBound(window.items, changes[0]![0]);
  let result = yield* rechunk(
    loader,
    0,
    items,
    window.last,
    build,
    oldNodes,
    uncut(window.nodes, firstChange),
  );
  let replaced = { first: start, last: result.last };
  for (let level = 1; level <= top.level; level++) {
    // The parents of the replaced nodes: their entries for those nodes give way to the new ones.
    const first = parentOf(replaced.first);
    const last = parentOf(replaced.last);
    window = yield* collect(loader, first, last);
    oldNodes = window.nodes;
    const from = first.at(-1)!.index;
    const to = window.items.length - last.at(-1)!.node.items.length + last.at(-1)!.index;
    items = window.items.slice(0, from);
    for (const node of result.nodes) items.push(childItem(node));
    for (let i = to + 1; i < window.items.length; i++) items.push(window.items[i]!);
    result = yield* rechunk(
      loader,
      level,
      items,
      window.last,
      build,
      oldNodes,
      uncut(window.nodes, from),
    );
    start = first;
    replaced = { first: start, last: result.last };
  }
  let nodes = result.nodes;
  let level = top.level;
  if (nodes.length === 0) return EMPTY_NODE;
  while (nodes.length > 1) {
    level += 1;
    nodes = chunk(level, nodes.map(childItem)).map((group) => build(level, group));
  }
  let newTop = nodes[0]!;
  while (newTop.level > 0 && newTop.items.length === 1) {
    const id = newTop.items[0]!.target;
    newTop = loader.known(id) ?? (yield id);
  }
  return newTop;
}

/** A directory built whole from entries in name order (no old nodes to keep). */
export function buildDirectory(
  loader: NodeLoader,
  hash: HashFunctions,
  items: readonly Item[],
): DirectoryNode {
  if (items.length === 0) return EMPTY_NODE;
  let level = 0;
  let nodes = chunk(0, items).map((group) => encodeNode(0, group, hash));
  for (const node of nodes) loader.add(node);
  while (nodes.length > 1) {
    level += 1;
    const above = level;
    nodes = chunk(above, nodes.map(childItem)).map((group) => encodeNode(above, group, hash));
    for (const node of nodes) loader.add(node);
  }
  return nodes[0]!;
}

/** The nodes reachable from `top` among those built in this operation, children first. */
export function builtBelow(loader: NodeLoader, top: DirectoryNode): DirectoryNode[] {
  // Most children of a node on the edited path were not built: their ids' first
  // four bytes rule them out before a key is made for them.
  const words = new Set<number>();
  for (const node of loader.pending()) words.add(firstWord(node.id));
  const out: DirectoryNode[] = [];
  const seenRows = new Set<DirectoryNode>();
  const seenHeld = new Set<DirectoryNode>();
  // A directory held inline in its entry is no row: only the rows below it are.
  const visit = (node: DirectoryNode, row: boolean) => {
    const seen = row ? seenRows : seenHeld;
    if (seen.has(node)) return;
    seen.add(node);
    for (const item of node.items) {
      if (item.kind === "file" || !words.has(firstWord(item.target))) continue;
      const child = loader.built(item.target);
      if (child !== undefined) visit(child, item.node === undefined);
    }
    // The top may be a node kept from before (an edit that left one child of a top).
    if (row && (node !== top || loader.built(top.id) === top)) out.push(node);
  };
  visit(top, true);
  return out;
}

function firstWord(id: Uint8Array): number {
  return ((id[0]! << 24) | (id[1]! << 16) | (id[2]! << 8) | id[3]!) >>> 0;
}

/** The path from the top to the leaf where `name` is, or would be. */
function* descend(loader: NodeLoader, top: DirectoryNode, name: string): NodeWork<Path> {
  const path: Path = [];
  let node = top;
  while (node.level > 0) {
    const index = childFor(node, name);
    path.push({ node, index });
    const id = node.items[index]!.target;
    node = loader.known(id) ?? (yield id);
  }
  path.push({ node, index: 0 });
  return path;
}

/** The path to the node after the one `path` ends at, on the same level; undefined at the level's end. */
function* next(loader: NodeLoader, path: Path): NodeWork<Path | undefined> {
  for (let k = path.length - 2; k >= 0; k--) {
    const step = path[k]!;
    if (step.index + 1 >= step.node.items.length) continue;
    const out: Path = path.slice(0, k).map((s) => ({ node: s.node, index: s.index }));
    out.push({ node: step.node, index: step.index + 1 });
    const right = step.node.items[step.index + 1]!.target;
    let node = loader.known(right) ?? (yield right);
    while (out.length < path.length - 1) {
      out.push({ node, index: 0 });
      const first = node.items[0]!.target;
      node = loader.known(first) ?? (yield first);
    }
    out.push({ node, index: 0 });
    return out;
  }
  return undefined;
}

function samePlace(a: Path, b: Path): boolean {
  for (let k = 0; k < a.length - 1; k++) if (a[k]!.index !== b[k]!.index) return false;
  return true;
}

/** The nodes from `first` to `last` (same level), their entries, and the path to the last. */
function* collect(
  loader: NodeLoader,
  first: Path,
  last: Path,
): NodeWork<{ nodes: DirectoryNode[]; items: readonly Item[]; last: Path }> {
  const nodes = [first.at(-1)!.node];
  let at = first;
  while (!samePlace(at, last)) {
    const following = yield* next(loader, at);
    if (following === undefined) break;
    at = following;
    nodes.push(at.at(-1)!.node);
  }
  // One node (the usual window): its entries as they are, not a copy.
  const items = nodes.length === 1 ? nodes[0]!.items : nodes.flatMap((node) => node.items);
  return { nodes, items, last: at };
}

/**
 * How many of a window's first entries are known to end no node: those
 * before the first change (`unchanged` of them) that its first old node
 * held and did not end with. The window starts where that node started, so
 * each of them is where it was, counted as it was, and the cut rule said no
 * then; the node's last entry is decided again (it may have ended the node
 * only by being the last of its level). So an edit near a node's end
 * hashes a name or two, not every name of the node.
 */
function uncut(windowNodes: readonly DirectoryNode[], unchanged: number): number {
  return Math.max(0, Math.min(unchanged, windowNodes[0]!.items.length - 1));
}

/**
 * Chunks a window's entries, the first `uncut` of them known to end no node
 * (see `uncut`); while the last chunk is still open where the window ended,
 * takes in the next old node (adding it to `replaced`). Returns the new
 * nodes and the path to the last old node they replace.
 */
function* rechunk(
  loader: NodeLoader,
  level: number,
  items: Item[],
  windowLast: Path,
  build: (level: number, items: Item[]) => DirectoryNode,
  replaced: DirectoryNode[],
  uncut: number,
): NodeWork<{ nodes: DirectoryNode[]; last: Path }> {
  const nodes: DirectoryNode[] = [];
  const done = (group: Item[]) => nodes.push(build(level, group));
  // The entries of the chunk still open, carried from one list to the next.
  let open = cutInto(level, items, [], done, uncut);
  let last = windowLast;
  while (open.length > 0) {
    const following = yield* next(loader, last);
    if (following === undefined) break;
    last = following;
    replaced.push(last.at(-1)!.node);
    open = cutInto(level, last.at(-1)!.node.items, open, done);
  }
  if (open.length > 0) nodes.push(build(level, open));
  return { nodes, last };
}

/** Entries cut into node-sized groups by the cut rule. */
function chunk(level: number, items: readonly Item[]): Item[][] {
  const groups: Item[][] = [];
  const open = cutInto(level, items, [], (group) => groups.push(group));
  if (open.length > 0) groups.push(open);
  return groups;
}

/**
 * The cut rule over `list`, after the entries `open` holds of a group not
 * yet ended: each group that ends is handed to `done`; returns the entries
 * of the group still open after `list`. The first `uncut` entries of `list`
 * are known to end no group (with `open` empty: see `uncut`) and are not
 * asked.
 */
function cutInto(
  level: number,
  list: readonly Item[],
  open: Item[],
  done: (group: Item[]) => void,
  uncut = 0,
): Item[] {
  let from = 0;
  for (let i = uncut; i < list.length; i++) {
    if (endsNode(level, open.length + i + 1 - from, list[i]!.name)) {
      const group = list.slice(from, i + 1);
      done(open.length === 0 ? group : open.concat(group));
      open = [];
      from = i + 1;
    }
  }
  return from < list.length ? open.concat(list.slice(from)) : open;
}

/** True when the cut rule makes one node of these entries: no node ends before the last. */
export function fitsOneNode(level: number, items: readonly Item[]): boolean {
  for (let i = 0; i < items.length - 1; i++)
    if (endsNode(level, i + 1, items[i]!.name)) return false;
  return true;
}

/** The cut rule (node.ts): a node ends after `name`, its `count`-th entry, when its hash says so or it is full. */
function endsNode(level: number, count: number, name: string): boolean {
  return count >= MAX_NODE_ENTRIES || isCut(level, name);
}

function parentOf(path: Path): Path {
  return path.slice(0, -1);
}

function childItem(node: DirectoryNode): Item {
  return { name: node.items[0]!.name, kind: "node", target: node.id, size: 0 };
}

/** The child of an inner node whose range holds `name`: the last whose first name is ≤ it. */
function childFor(node: DirectoryNode, name: string): number {
  let lo = 0;
  let hi = node.items.length - 1;
  while (lo < hi) {
    const mid = (lo + hi + 1) >> 1;
    if (compareNames(node.items[mid]!.name, name) <= 0) lo = mid;
    else hi = mid - 1;
  }
  return lo;
}

/** The first index whose name is ≥ `name`. */
function lowerBound(items: readonly Item[], name: string): number {
  let lo = 0;
  let hi = items.length;
  while (lo < hi) {
    const mid = (lo + hi) >> 1;
    if (compareNames(items[mid]!.name, name) < 0) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}

/** Sorted entries with sorted changes merged in: a change replaces, adds or (null) removes. */
export function merge(items: readonly Item[], changes: readonly Change[]): Item[] {
  const out: Item[] = [];
  let i = 0;
  for (const [name, item] of changes) {
    while (i < items.length && compareNames(items[i]!.name, name) < 0) out.push(items[i++]!);
    if (i < items.length && items[i]!.name === name) i++;
    if (item !== null) out.push(item);
  }
  while (i < items.length) out.push(items[i++]!);
  return out;
}
