/**
 * Directory nodes decoded (node.ts has the format): stored bytes read back
 * into a node's entries, refused unless they are a well-formed node.
 */
import {
  type DirectoryNode,
  ENTRY_KINDS,
  INLINE_MAX,
  INLINE_NODE_MAX,
  type Item,
  type ItemKind,
  NODE_DOMAIN_BYTES,
} from "./node.js";
import { readVarint } from "./varint.js";

// The kind bytes of leaf entries, as node.ts declares them (ENTRY_KINDS).
const {
  file: FILE_KIND,
  directory: DIRECTORY_KIND,
  "inline-file": INLINE_FILE_KIND,
  "inline-directory": INLINE_DIRECTORY_KIND,
} = ENTRY_KINDS;
const DOMAIN = NODE_DOMAIN_BYTES;

// ignoreBOM keeps a name that starts with U+FEFF as it is (by default the decoder drops it).
const decoder = new TextDecoder("utf-8", { fatal: true, ignoreBOM: true });

/** True when bytes start with the node domain (a stored object that is a directory node). */
export function isNodeBytes(bytes: Uint8Array): boolean {
  if (bytes.length < DOMAIN.length) return false;
  for (let i = 0; i < DOMAIN.length; i++) if (bytes[i] !== DOMAIN[i]) return false;
  return true;
}

/** Reads a node's bytes; undefined when they are not a well-formed node. */
export function decodeNode(id: Uint8Array, bytes: Uint8Array): DirectoryNode | undefined {
  try {
    if (bytes.length < DOMAIN.length + 2 || !isNodeBytes(bytes)) return undefined;
    let at = DOMAIN.length;
    const level = bytes[at++]!;
    const [count, afterCount] = readVarint(bytes, at);
    at = afterCount;
    const items: Item[] = [];
    for (let i = 0; i < count; i++) {
      let kind: ItemKind = "node";
      const byte = level === 0 ? bytes[at++] : undefined;
      if (level === 0) {
        if (byte === FILE_KIND || byte === INLINE_FILE_KIND) kind = "file";
        else if (byte === DIRECTORY_KIND || byte === INLINE_DIRECTORY_KIND) kind = "directory";
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
      if (byte === INLINE_DIRECTORY_KIND) {
        const [length, afterNodeLength] = readVarint(bytes, at);
        at = afterNodeLength;
        if (length > INLINE_NODE_MAX || at + length > bytes.length) return undefined;
        const content = bytes.slice(at, at + length);
        const node = decodeNode(target, content);
        if (node === undefined) return undefined;
        items.push({ name, kind, target, size, content, node });
        at += length;
      } else if (byte === INLINE_FILE_KIND) {
        if (size > INLINE_MAX || at + size > bytes.length) return undefined;
        items.push({ name, kind, target, size, content: bytes.slice(at, at + size) });
        at += size;
      } else {
        // A small file held apart is not canonical: its id would differ from the inline one's.
        if (byte === FILE_KIND && size <= INLINE_MAX) return undefined;
        items.push({ name, kind, target, size });
      }
    }
    if (at !== bytes.length) return undefined;
    return { id, level, items };
  } catch {
    return undefined;
  }
}
