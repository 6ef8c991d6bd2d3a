/**
 * Nodes stored as their change to the node they replaced.
 *
 * A step that puts one file into a large directory rewrites one node per
 * level of its tree, and each new node differs from the one it replaces by
 * an entry or two: stored whole, every version of a busy directory's path
 * is kept in full, and a run's file grows by the size of that path a step.
 * So a new node may be stored as a *delta*: the id of a stored node (its
 * base) and the few operations that rebuild the new node's bytes from the
 * base's — copy a range of the base, or insert literal bytes.
 *
 * Why the rules are what they are:
 * - A node's id is still the SHA-256 of its full bytes: ids, roots, history
 *   independence and everything a reader sees are unchanged; only the row
 *   that holds the node is smaller. The same node may be stored whole in one
 *   run and as a delta in another.
 * - A delta row records its depth: 1 above a whole row, and always more
 *   than its base's. So a chain always ends at a whole node within
 *   MAX_CHAIN reads, and a damaged file can never send a reader round a
 *   loop. Which representation a row gets is decided by SQLite when the row
 *   is inserted, from the base row it finds (see object-rows.ts): a delta only
 *   onto a base that is present and not already MAX_CHAIN deep, else the
 *   whole node. No process has to know how another one stored a node.
 * - A delta is proposed only onto a node of the directory the edit replaced,
 *   which is reachable from the current root the apply publishes against,
 *   and only when it is at most half the node's size.
 * - Garbage collection never leaves a delta without its base: a kept delta
 *   whose base is collected is first rewritten whole (gc.ts).
 */
import { blockBytes } from "./blocks.js";
import { compareNames, type DirectoryNode, type Item, NODE_PREFIX_LENGTH } from "./node.js";
import { entryOffsets, sharedEntries } from "./node-encoding.js";
import { readVarint, varintLength, writeVarint } from "./varint.js";

/** The deepest a delta row may be: a node is rebuilt from at most this many changes. */
export const MAX_CHAIN = 16;
/**
 * The version of a delta's layout (its base id, then the operations of
 * `Operations` below): a change to that layout raises it, and so moves the
 * workspace encoding a file records (encoding.ts).
 */
export const DELTA_FORMAT = 1;

/**
 * A delta's data for storing `node` (built here, with its bytes) as a change
 * to `base`: the base's id, then the operations. Undefined when the delta
 * would be more than half the node's size (then it is stored whole).
 */
export function encodeDelta(base: DirectoryNode, node: DirectoryNode): Uint8Array | undefined {
  const bytes = node.bytes;
  // A node of one entry differs from its base in that entry: its delta would be the node.
  if (bytes === undefined || base.level !== node.level || node.items.length < 2) return undefined;
  const baseAt = base.offsets ?? entryOffsets(base.level, base.items);
  const nodeAt = node.offsets ?? entryOffsets(node.level, node.items);
  const ops = new Operations(bytes);
  // The domain and the level byte are the base's; the entry count is written out.
  ops.copy(0, NODE_PREFIX_LENGTH);
  ops.insert(NODE_PREFIX_LENGTH, nodeAt[0]!);
  const shared = sharedEntries(base.items, node.items);
  for (let i = 0; i < node.items.length; i++) {
    const j = shared[i]!;
    if (j >= 0) ops.copy(baseAt[j]!, baseAt[j + 1]! - baseAt[j]!);
    else ops.insert(nodeAt[i]!, nodeAt[i + 1]!);
  }
  return 2 * ops.length() <= bytes.length ? ops.finish(base.id) : undefined;
}

/**
 * Rebuilds a node's bytes from its base's bytes and a delta's data (base id
 * and operations); undefined when the delta is not well-formed or does not
 * rebuild exactly `size` bytes.
 */
export function applyDelta(
  base: Uint8Array,
  data: Uint8Array,
  size: number,
): Uint8Array | undefined {
  try {
    const out = new Uint8Array(size);
    let written = 0;
    let at = 32;
    if (data.length <= at) return undefined;
    while (at < data.length) {
      let header: number;
      [header, at] = readVarint(data, at);
      const length = Math.floor(header / 2);
      if (length === 0 || written + length > size) return undefined;
      if (header % 2 === 0) {
        if (at + length > data.length) return undefined;
        out.set(data.subarray(at, at + length), written);
        at += length;
      } else {
        let offset: number;
        [offset, at] = readVarint(data, at);
        if (offset + length > base.length) return undefined;
        out.set(base.subarray(offset, offset + length), written);
      }
      written += length;
    }
    return written === size ? out : undefined;
  } catch {
    return undefined;
  }
}

/** The base a new node is stored against: the replaced node whose range holds its first name. */
export function baseFor(
  replaced: readonly DirectoryNode[],
  items: readonly Item[],
): DirectoryNode | undefined {
  const first = items[0];
  if (first === undefined) return undefined;
  let chosen = replaced[0];
  for (const node of replaced) {
    const start = node.items[0];
    if (start !== undefined && compareNames(start.name, first.name) <= 0) chosen = node;
  }
  return chosen;
}

/**
 * The operations of a delta, each a LEB128 header then its operand: an even
 * header 2n inserts the n bytes that follow; an odd header 2n + 1 copies n
 * bytes of the base from the LEB128 offset that follows. Adjacent copies of
 * adjacent ranges, and adjacent inserts, are written as one.
 */
class Operations {
  readonly #bytes: Uint8Array;
  /** One triple per operation: 1 for a copy (0 for an insert), its start, its length. */
  readonly #parts: number[] = [];

  constructor(bytes: Uint8Array) {
    this.#bytes = bytes;
  }

  copy(offset: number, length: number): void {
    this.#add(1, offset, length);
  }

  /** Inserts the node's own bytes from `start` to `end`. */
  insert(start: number, end: number): void {
    if (end > start) this.#add(0, start, end - start);
  }

  /** Extends the last operation when it is of the same kind and ends where this one starts. */
  #add(copy: number, from: number, length: number): void {
    const parts = this.#parts;
    const last = parts.length - 3;
    if (last >= 0 && parts[last] === copy && parts[last + 1]! + parts[last + 2]! === from) {
      parts[last + 2] = parts[last + 2]! + length;
    } else {
      parts.push(copy, from, length);
    }
  }

  /** The delta's length in bytes, base id included. */
  length(): number {
    const parts = this.#parts;
    let length = 32;
    for (let k = 0; k < parts.length; k += 3) {
      const copy = parts[k] === 1;
      const size = parts[k + 2]!;
      length +=
        varintLength(2 * size + (copy ? 1 : 0)) + (copy ? varintLength(parts[k + 1]!) : size);
    }
    return length;
  }

  finish(baseId: Uint8Array): Uint8Array {
    const out = blockBytes(this.length());
    out.set(baseId, 0);
    let at = 32;
    const parts = this.#parts;
    for (let k = 0; k < parts.length; k += 3) {
      const copy = parts[k] === 1;
      const from = parts[k + 1]!;
      const size = parts[k + 2]!;
      at = writeVarint(out, at, 2 * size + (copy ? 1 : 0));
      if (copy) {
        at = writeVarint(out, at, from);
      } else {
        out.set(this.#bytes.subarray(from, from + size), at);
        at += size;
      }
    }
    return out;
  }
}
