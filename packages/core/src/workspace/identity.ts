/**
 * Content addressing for the workspace, format 1. Everything here is
 * documented byte by byte in docs/file-format.md so that any implementation
 * can recompute the ids:
 *
 * - blob digest = SHA-256 of the file's bytes, nothing else (so `sha256sum`
 *   agrees with it);
 * - tree id = SHA-256( "runledger/workspace/tree/1" 0x00, then for each entry
 *   in ascending UTF-8 byte order of its name: kind (0x01 file, 0x02
 *   directory), the name's UTF-8 length as 4 bytes big-endian, the name's
 *   UTF-8 bytes, the 32-byte blob digest or subtree id );
 * - root id = SHA-256( "runledger/workspace/root/1" 0x00, tree id ).
 *
 * The domain prefixes keep a tree, a root and a blob from ever sharing an id.
 */
import { createSha256, toHex, utf8 } from "../port/hash.js";

export const ROOT_FORMAT = 1;

export type EntryKind = "file" | "directory";

export interface TreeEntry {
  readonly name: string;
  readonly kind: EntryKind;
  /** The blob digest (file) or subtree id (directory), 32 bytes. */
  readonly target: Uint8Array;
}

const TREE_DOMAIN = utf8("runledger/workspace/tree/1\u0000");
const ROOT_DOMAIN = utf8("runledger/workspace/root/1\u0000");
const KIND_BYTE: Record<EntryKind, number> = { file: 1, directory: 2 };

/** Orders names by their UTF-8 bytes, the order tree ids are computed in. */
export function compareNames(a: string, b: string): number {
  const x = utf8(a);
  const y = utf8(b);
  const length = Math.min(x.length, y.length);
  for (let i = 0; i < length; i++) {
    if (x[i] !== y[i]) return x[i]! - y[i]!;
  }
  return x.length - y.length;
}

export function treeId(entries: readonly TreeEntry[]): Uint8Array {
  const sorted = [...entries].sort((a, b) => compareNames(a.name, b.name));
  const hash = createSha256().update(TREE_DOMAIN);
  for (const entry of sorted) {
    const name = utf8(entry.name);
    const header = new Uint8Array(5);
    header[0] = KIND_BYTE[entry.kind];
    new DataView(header.buffer).setUint32(1, name.length);
    hash.update(header).update(name).update(entry.target);
  }
  return hash.digest();
}

export function rootId(tree: Uint8Array): Uint8Array {
  return createSha256().update(ROOT_DOMAIN).update(tree).digest();
}

export const EMPTY_TREE_ID_BYTES: Uint8Array = treeId([]);
export const EMPTY_ROOT_ID_BYTES: Uint8Array = rootId(EMPTY_TREE_ID_BYTES);

/** The canonical empty workspace root, identical on every adapter (hex). */
export const EMPTY_ROOT_ID: string = toHex(EMPTY_ROOT_ID_BYTES);
