/**
 * Directory nodes encoded (node.ts has the format): a node's canonical
 * bytes and id from its entries, built fast for an edit — entries the node
 * it replaces also holds copied from that node's bytes — and the entry that
 * names a directory by its top node.
 */
import { sameBytes, toHex } from "../port/bytes.js";
import type { HashFunctions } from "../port/hash.js";
import { portableHash } from "../port/hash.js";
import { isAscii, utf8 } from "../port/text.js";
import { blockBytes } from "./blocks.js";
import {
  compareNames,
  type DirectoryNode,
  entryKind,
  INLINE_NODE_MAX,
  type Item,
  NODE_DOMAIN_BYTES,
} from "./node.js";
import { varintLength, writeVarint } from "./varint.js";

const DOMAIN = NODE_DOMAIN_BYTES;

/**
 * Builds a node's bytes and id. Items must already be in name order. With
 * `base` — the node this one replaces, at hand with its bytes — entries
 * equal to base entries are copied from the base's bytes (an entry's bytes
 * depend on nothing but the entry), so an edit that changes one entry of a
 * large node writes that entry and copies the rest; the node records `base`
 * to be stored as a change to it (delta.ts).
 */
export function encodeNode(
  level: number,
  items: readonly Item[],
  hash: HashFunctions = portableHash,
  base?: DirectoryNode,
): DirectoryNode {
  const { bytes, offsets } = bytesFrom(
    level,
    items,
    base?.bytes !== undefined && base.level === level
      ? (base as DirectoryNode & { bytes: Uint8Array })
      : undefined,
  );
  const id = hash.sha256(bytes);
  return base === undefined
    ? { id, level, items, bytes, offsets }
    : { id, level, items, bytes, offsets, base };
}

/** A node's canonical bytes, and where each entry starts in them (`entryOffsets`). */
export function nodeBytes(
  level: number,
  items: readonly Item[],
): { bytes: Uint8Array; offsets: number[] } {
  return bytesFrom(level, items, undefined);
}

/**
 * `nodeBytes`, with each run of entries that `base` (the node replaced, with
 * its bytes) also holds, in the same order, copied from its bytes.
 */
function bytesFrom(
  level: number,
  items: readonly Item[],
  base: (DirectoryNode & { bytes: Uint8Array }) | undefined,
): { bytes: Uint8Array; offsets: number[] } {
  const baseAt = base === undefined ? undefined : (base.offsets ?? entryOffsets(level, base.items));
  const shared = base === undefined ? undefined : sharedEntries(base.items, items);
  // The names of the entries not copied, to encode (an ASCII one as its code units).
  const names: (string | Uint8Array | undefined)[] = new Array(items.length);
  const offsets: number[] = new Array(items.length + 1);
  let length = headerLength(items.length);
  offsets[0] = length;
  for (let i = 0; i < items.length; i++) {
    const j = shared?.[i] ?? -1;
    if (j >= 0) {
      length += baseAt![j + 1]! - baseAt![j]!;
    } else {
      const item = items[i]!;
      const name = isAscii(item.name) ? item.name : utf8(item.name);
      names[i] = name;
      length += entryLength(level, item, name.length);
    }
    offsets[i + 1] = length;
  }
  const bytes = header(level, items.length, length);
  for (let i = 0; i < items.length; ) {
    const j = shared?.[i] ?? -1;
    if (j < 0) {
      writeEntry(bytes, offsets[i]!, level, items[i]!, names[i]!);
      i++;
      continue;
    }
    let end = i + 1;
    while (end < items.length && shared![end] === j + (end - i)) end++;
    bytes.set(base!.bytes.subarray(baseAt![j]!, baseAt![j + end - i]!), offsets[i]!);
    i = end;
  }
  return { bytes, offsets };
}

/**
 * For each of `items`, the index of the entry of `olds` that encodes to the
 * same bytes, or -1 (both lists in name order): what a node replacing
 * another shares with it, for its bytes and for its delta (delta.ts).
 */
export function sharedEntries(olds: readonly Item[], items: readonly Item[]): number[] {
  const shared: number[] = new Array(items.length);
  let j = 0;
  for (let i = 0; i < items.length; i++) {
    const item = items[i]!;
    while (j < olds.length && olds[j] !== item && compareNames(olds[j]!.name, item.name) < 0) j++;
    if (j < olds.length && sameEntry(olds[j]!, item)) {
      shared[i] = j;
      j++;
    } else {
      shared[i] = -1;
    }
  }
  return shared;
}

/** Two entries that encode to the same bytes. */
function sameEntry(a: Item, b: Item): boolean {
  if (a === b) return true;
  // Content held in an entry hashes to its target (a file's digest, a held
  // directory's id): equal targets, equal content — no need to compare it.
  return (
    a.name === b.name &&
    a.kind === b.kind &&
    a.size === b.size &&
    (a.content === undefined) === (b.content === undefined) &&
    sameBytes(a.target, b.target)
  );
}

function headerLength(count: number): number {
  return DOMAIN.length + 1 + varintLength(count);
}

/**
 * A node's bytes of `length`, with the domain, level and entry count written:
 * carved from a block (blocks.ts), unless a parent's entry may hold them.
 */
function header(level: number, count: number, length: number): Uint8Array {
  const bytes = length > INLINE_NODE_MAX ? blockBytes(length) : new Uint8Array(length);
  bytes.set(DOMAIN, 0);
  bytes[DOMAIN.length] = level;
  writeVarint(bytes, DOMAIN.length + 1, count);
  return bytes;
}

/** Writes one entry at `at` (its name as code units if ASCII, else as UTF-8). */
function writeEntry(
  bytes: Uint8Array,
  at: number,
  level: number,
  item: Item,
  name: string | Uint8Array,
): void {
  if (level === 0) bytes[at++] = entryKind(item);
  at = writeVarint(bytes, at, name.length);
  if (typeof name === "string") {
    for (let k = 0; k < name.length; k++) bytes[at + k] = name.charCodeAt(k);
  } else {
    bytes.set(name, at);
  }
  at += name.length;
  bytes.set(item.target, at);
  at += 32;
  if (level === 0 && item.kind === "file") at = writeVarint(bytes, at, item.size);
  else if (level === 0 && item.content !== undefined) {
    at = writeVarint(bytes, at, item.content.length);
  }
  if (level === 0 && item.content !== undefined) bytes.set(item.content, at);
}

/** Where a node's entries start in its bytes: entry i spans [at[i], at[i + 1]); at[count] is the end. */
export function entryOffsets(level: number, items: readonly Item[]): number[] {
  const at: number[] = new Array(items.length + 1);
  let end = headerLength(items.length);
  at[0] = end;
  for (let i = 0; i < items.length; i++) {
    const item = items[i]!;
    end += entryLength(level, item, isAscii(item.name) ? item.name.length : utf8(item.name).length);
    at[i + 1] = end;
  }
  return at;
}

/** An entry's encoded length, given its name's UTF-8 length (the layout above). */
function entryLength(level: number, item: Item, nameLength: number): number {
  let length = (level === 0 ? 1 : 0) + varintLength(nameLength) + nameLength + 32;
  if (level === 0 && item.kind === "file") {
    length += varintLength(item.size) + (item.content?.length ?? 0);
  } else if (level === 0 && item.content !== undefined) {
    length += varintLength(item.content.length) + item.content.length;
  }
  return length;
}

/** The bytes every node starts with, up to its level byte: the domain and the level. */
/** The canonical empty directory (and empty workspace root): a leaf with no entries. */
export const EMPTY_NODE: DirectoryNode = encodeNode(0, []);
export const EMPTY_ROOT_ID_BYTES: Uint8Array = EMPTY_NODE.id;
/** The canonical empty workspace root, identical on every adapter (hex). */
export const EMPTY_ROOT_ID: string = toHex(EMPTY_ROOT_ID_BYTES);

/**
 * The entry naming a directory whose top node is `top`: holding the node's
 * bytes when they are at most INLINE_NODE_MAX (so the node gets no row of its
 * own), else its id alone.
 */
export function directoryItem(name: string, top: DirectoryNode, hash: HashFunctions): Item {
  const length = top.bytes?.length ?? entryOffsets(top.level, top.items).at(-1)!;
  if (length > INLINE_NODE_MAX) return { name, kind: "directory", target: top.id, size: 0 };
  const bytes = top.bytes ?? encodeNode(top.level, top.items, hash).bytes!;
  // Only what reading needs: a built node's bytes and base would stay alive in every cached parent.
  const node = { id: top.id, level: top.level, items: top.items };
  return { name, kind: "directory", target: top.id, size: 0, content: bytes, node };
}
