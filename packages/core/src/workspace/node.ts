/**
 * Directory nodes, format 1: the bytes that name a workspace's content.
 *
 * A directory is a prolly tree — a B-tree whose node boundaries are chosen
 * by the entries themselves, not by the order of the edits that made it —
 * so that:
 * - the same set of (name → content) always gives the same nodes and so the
 *   same ids (history independence: a root id says *what* a workspace holds,
 *   whatever edits produced it);
 * - putting one file into a directory of n files rewrites O(log n) nodes,
 *   never the whole directory;
 * - entries stay in name order, so a listing streams.
 *
 * Every node is stored as an object whose id is the SHA-256 of its bytes
 * (docs/file-format.md has the byte layout):
 *
 *   "runledger/node/1" 0x00 · level (1 byte) · entry count (LEB128) · entries
 *
 * A level-0 (leaf) entry is kind (0x01 file, 0x02 directory, 0x03 inline
 * file, 0x04 inline directory) · name length (LEB128) · name (UTF-8) ·
 * target (32 bytes: the file's SHA-256, or the directory's top node id) ·
 * for a file, its size (LEB128) · for an inline file, its content (size
 * bytes) · for an inline directory, its top node's length (LEB128) and
 * bytes. A directory whose top node is at most INLINE_NODE_MAX bytes is
 * always inline, a larger one never, for the same reasons as a file: a step
 * that changes a small directory — a folder holding a state file — stores
 * one node, not two, and the parent's row carries the child's bytes instead
 * of a second row and a second entry at a random place in the key index.
 * Only a directory's top is ever held in an entry; the nodes below a large
 * directory's top, and every root, are rows. A file of at most INLINE_MAX
 * bytes is always inline, a larger one never: the choice is the content's,
 * so ids stay history independent. Inline, a small file costs no row of its
 * own and a step that writes one stores one object fewer. A leaf is stored
 * whole at most once per MAX_CHAIN + 1 versions and as its changed entries in
 * between (delta.ts), so an inline file is copied into few versions of its
 * leaf; INLINE_MAX keeps a leaf of average size (CUT_ONE_IN entries) whose
 * files are all inline to two 4 KiB pages, so that copy stays cheaper than a
 * row at a random key. A level-n entry
 * (n ≥ 1) is the first name below a child · that name's length and bytes ·
 * the child's node id. Names ascend strictly in UTF-8 byte order.
 *
 * Where a node ends (the cut rule): after an entry whose cut hash — FNV-1a
 * (32-bit) over the level byte then the name's UTF-8, finished with
 * MurmurHash3's 32-bit mixer — is a multiple of CUT_ONE_IN, or once a node
 * holds MAX_NODE_ENTRIES (so a node stays small even for names chosen to
 * avoid cuts); and after the level's last entry. A level with more than one
 * node has a level above it; the top is the first level with a single node.
 * The cut hash needs no cryptographic strength: ids do, and they are SHA-256.
 *
 * Why one in 32: an edit writes one node per level below a directory's held
 * top, each a row and an entry at a random place in the key index (about a
 * WAL page each), so fewer levels is fewer pages a step. A node's whole bytes
 * are encoded and hashed at each edit, which a larger node makes dearer, but
 * it is stored as a delta of its changed entries, so the file does not grow
 * with it. Measured on a step adding a file to a directory of 5,000: one in
 * 12 wrote five nodes and 9.0 WAL pages, one in 32 writes three and 7.0.
 *
 * Here: the format's constants, the shape of a node, and its bytes read
 * back (decodeNode); they are written by node-encoding.ts.
 */
import { isAscii, utf8 } from "../port/text.js";
import { readVarint } from "./varint.js";

/** A node ends after about one entry in CUT_ONE_IN (its mean size in entries). */
export const CUT_ONE_IN = 32;
/** A node never holds more entries than this. */
export const MAX_NODE_ENTRIES = 128;
/** A file of at most this many bytes lives inside its directory's leaf entry. */
export const INLINE_MAX = 256;
/**
 * A directory whose top node is at most this many bytes lives inside its
 * parent's leaf entry: a directory of one inline file of INLINE_MAX bytes
 * with a name of up to 200 bytes fits, so does one of a few small files.
 */
export const INLINE_NODE_MAX = 512;

/** What every node's bytes start with (then a 0x00): the node format's name and version. */
export const NODE_DOMAIN = "runledger/node/1";
/** What every node's bytes start with: the domain, then a 0x00. */
export const NODE_DOMAIN_BYTES: Uint8Array = utf8(`${NODE_DOMAIN}\u0000`);
const FILE = 1;
const DIRECTORY = 2;
const INLINE_FILE = 3;
const INLINE_DIRECTORY = 4;
/** The kind byte of each leaf entry (the layout above), by name. */
export const ENTRY_KINDS = Object.freeze({
  file: FILE,
  directory: DIRECTORY,
  "inline-file": INLINE_FILE,
  "inline-directory": INLINE_DIRECTORY,
} as const);

export type ItemKind = "file" | "directory" | "node";

/** One entry of a node: a file or directory (level 0), or a child node (above). */
export interface Item {
  readonly name: string;
  readonly kind: ItemKind;
  /** The file's SHA-256, the directory's top node id, or the child node's id. */
  readonly target: Uint8Array;
  /** Files: the content's size in bytes; 0 otherwise. */
  readonly size: number;
  /**
   * A file of at most INLINE_MAX bytes: its content, held in the entry; a
   * directory whose top node is at most INLINE_NODE_MAX bytes: that node's bytes.
   */
  readonly content?: Uint8Array;
  /** An inline directory's top node, decoded from `content`. */
  readonly node?: DirectoryNode;
}

export interface DirectoryNode {
  readonly id: Uint8Array;
  readonly level: number;
  readonly items: readonly Item[];
  /**
   * Its bytes, for a node built here: the apply that built it stores them,
   * and the node cache keeps them so that the next edit of the node copies
   * its unchanged entries from them (`encodeNode`'s base).
   */
  readonly bytes?: Uint8Array;
  /** With `bytes`: where each entry starts in them, as `entryOffsets` gives. */
  readonly offsets?: readonly number[];
  /** A node built here: the old node it replaces, to be stored as a change to (see delta.ts). */
  readonly base?: DirectoryNode;
}

/** Orders names by their UTF-8 bytes (= code point order), without encoding them. */
export function compareNames(a: string, b: string): number {
  const length = Math.min(a.length, b.length);
  for (let i = 0; i < length; i++) {
    let x = a.charCodeAt(i);
    let y = b.charCodeAt(i);
    if (x === y) continue;
    // A surrogate stands for a code point above U+FFFF: it sorts after all of the BMP.
    if (x >= 0xd800 && x <= 0xdfff) x += 0x10000;
    if (y >= 0xd800 && y <= 0xdfff) y += 0x10000;
    return x - y;
  }
  return a.length - b.length;
}

/** True when a node at `level` ends after the entry named `name` (by the hash; the size cap is the caller's). */
export function isCut(level: number, name: string): boolean {
  let h = Math.imul(0x811c9dc5 ^ level, 0x01000193);
  if (isAscii(name)) {
    // An ASCII name's UTF-8 bytes are its code units: no encoding on the hot path.
    for (let i = 0; i < name.length; i++) h = Math.imul(h ^ name.charCodeAt(i), 0x01000193);
  } else {
    const bytes = utf8(name);
    for (let i = 0; i < bytes.length; i++) h = Math.imul(h ^ bytes[i]!, 0x01000193);
  }
  h ^= h >>> 16;
  h = Math.imul(h, 0x85ebca6b);
  h ^= h >>> 13;
  h = Math.imul(h, 0xc2b2ae35);
  h ^= h >>> 16;
  return (h >>> 0) % CUT_ONE_IN === 0;
}

/** The bytes every node starts with, up to its level byte: the domain and the level. */
export const NODE_PREFIX_LENGTH = NODE_DOMAIN_BYTES.length + 1;

/** A leaf entry's kind byte (the layout above). */
export function entryKind(item: Item): number {
  if (item.kind === "directory") return item.content === undefined ? DIRECTORY : INLINE_DIRECTORY;
  return item.content === undefined ? FILE : INLINE_FILE;
}

// ignoreBOM keeps a name that starts with U+FEFF as it is (by default the decoder drops it).
const decoder = new TextDecoder("utf-8", { fatal: true, ignoreBOM: true });

/** True when bytes start with the node domain (a stored object that is a directory node). */
export function isNodeBytes(bytes: Uint8Array): boolean {
  if (bytes.length < NODE_DOMAIN_BYTES.length) return false;
  for (let i = 0; i < NODE_DOMAIN_BYTES.length; i++)
    if (bytes[i] !== NODE_DOMAIN_BYTES[i]) return false;
  return true;
}

/** Reads a node's bytes; undefined when they are not a well-formed node. */
export function decodeNode(id: Uint8Array, bytes: Uint8Array): DirectoryNode | undefined {
  try {
    if (bytes.length < NODE_DOMAIN_BYTES.length + 2 || !isNodeBytes(bytes)) return undefined;
    let at = NODE_DOMAIN_BYTES.length;
    const level = bytes[at++]!;
    const [count, afterCount] = readVarint(bytes, at);
    at = afterCount;
    const items: Item[] = [];
    for (let i = 0; i < count; i++) {
      let kind: ItemKind = "node";
      const byte = level === 0 ? bytes[at++] : undefined;
      if (level === 0) {
        if (byte === FILE || byte === INLINE_FILE) kind = "file";
        else if (byte === DIRECTORY || byte === INLINE_DIRECTORY) kind = "directory";
        else return undefined;
      }
      const [nameLength, afterLength] = readVarint(bytes, at);
      at = afterLength;
      if (at + nameLength + 32 > bytes.length) return undefined;
      const name = decoder.decode(bytes.subarray(at, at + nameLength));
      at += nameLength;
      const target = bytes.slice(at, at + 32);
      at += 32;
      let size = 0;
      if (kind === "file") [size, at] = readVarint(bytes, at);
      if (byte === INLINE_DIRECTORY) {
        const [length, afterNodeLength] = readVarint(bytes, at);
        at = afterNodeLength;
        if (length > INLINE_NODE_MAX || at + length > bytes.length) return undefined;
        const content = bytes.slice(at, at + length);
        const node = decodeNode(target, content);
        if (node === undefined) return undefined;
        items.push({ name, kind, target, size, content, node });
        at += length;
      } else if (byte === INLINE_FILE) {
        if (size > INLINE_MAX || at + size > bytes.length) return undefined;
        items.push({ name, kind, target, size, content: bytes.slice(at, at + size) });
        at += size;
      } else {
        // A small file held apart is not canonical: its id would differ from the inline one's.
        if (byte === FILE && size <= INLINE_MAX) return undefined;
        items.push({ name, kind, target, size });
      }
    }
    if (at !== bytes.length) return undefined;
    return { id, level, items };
  } catch {
    return undefined;
  }
}
