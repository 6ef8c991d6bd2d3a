/**
 * Verify's walk of the trees: from every root the run retains, every
 * reference resolved — each node present, well-formed, in its canonical
 * encoding and canonically cut (so a root id still says exactly what the
 * workspace holds), each file present (an inline file's content re-hashed
 * against the digest its entry records), each directory held in its entry
 * exactly when it is small (its bytes re-hashed likewise), each root a
 * journal event holds well-formed and canonical.
 */
import { sameBytes, toHex } from "../port/bytes.js";
import type { Executor } from "../port/driver.js";
import type { HashFunctions } from "../port/hash.js";
import { HAS_OBJECT } from "./files.js";
import { idKey } from "./id-key.js";
import {
  compareNames,
  type DirectoryNode,
  decodeNode,
  INLINE_NODE_MAX,
  type Item,
  isCut,
  MAX_NODE_ENTRIES,
} from "./node.js";
import { readNodeBytes } from "./node-bytes.js";
import { EMPTY_ROOT_ID_BYTES, nodeBytes } from "./node-encoding.js";
import { objectKey } from "./object-key.js";
import type { RebuiltNodes } from "./rebuilt-nodes.js";
import type { RootRef } from "./root-journal.js";

/** Where a node is reached from, and so what it must look like (see the walk below). */
interface Place {
  readonly id: Uint8Array;
  readonly last: boolean;
  readonly top: boolean;
  /** A directory's top named by an entry (a root is not): a row only when too large to be held in it. */
  readonly entry?: boolean;
  /** The entry holding the directory's top, whose bytes are checked in place of a row's. */
  readonly held?: Item | undefined;
  /** A root its journal events hold: those bytes (the journal hashes them against the id). */
  readonly journal?: Uint8Array | undefined;
}

/** Walks every tree `roots` (the retained roots; the empty root besides) reach: the problems found. */
export async function checkTrees(
  reader: Executor,
  hash: HashFunctions,
  roots: readonly RootRef[],
  rebuilt: RebuiltNodes,
): Promise<string[]> {
  const problems: string[] = [];
  const checked = new Set<string>();
  const files = new Set<string>();
  const pending: Place[] = [
    { id: EMPTY_ROOT_ID_BYTES, last: true, top: true },
    ...roots.map(({ id, bytes }) => ({ id, last: true, top: true, journal: bytes })),
  ];
  while (pending.length > 0) {
    const place = pending.pop()!;
    const { id, last, top, entry, held } = place;
    // A stored node is checked once per place it can stand in; a held one is
    // part of its parent's row and is checked with each parent.
    if (held === undefined) {
      const key = `${toHex(id)}:${last}:${top}:${entry === true}`;
      if (checked.has(key)) continue;
      checked.add(key);
    }
    const node = await nodeAt(reader, hash, place, rebuilt, problems);
    if (node === undefined) continue;
    checkNode(node, { last, top }, problems);
    for (const [i, item] of node.items.entries()) {
      if (item.kind === "directory") {
        pending.push({
          id: item.target,
          last: true,
          top: true,
          entry: true,
          held: item.node && item,
        });
      } else if (item.kind === "node") {
        pending.push({ id: item.target, last: last && i === node.items.length - 1, top: false });
      } else if (item.content !== undefined) {
        if (!sameBytes(hash.sha256(item.content), item.target)) {
          problems.push(
            `file ${toHex(item.target)}: its inline content does not hash to its digest`,
          );
        }
      } else if (!files.has(idKey(item.target))) {
        files.add(idKey(item.target));
        const found = await reader.execute(HAS_OBJECT, objectKey(item.target));
        if (found.rows.length === 0) problems.push(`file ${toHex(item.target)}: missing`);
      }
    }
  }
  return problems;
}

/** The node at a place: held in its entry, held by the journal, or stored. */
function nodeAt(
  reader: Executor,
  hash: HashFunctions,
  { id, entry, held, journal }: Place,
  rebuilt: RebuiltNodes,
  problems: string[],
): DirectoryNode | undefined | Promise<DirectoryNode | undefined> {
  if (held !== undefined) return checkHeld(held, hash, problems);
  if (journal !== undefined) return checkJournalRoot(id, journal, problems);
  return loadNode(reader, id, problems, rebuilt, entry === true);
}
/** A directory's top held in its entry: its bytes hash to the id the entry names and are canonical. */
function checkHeld(item: Item, hash: HashFunctions, problems: string[]): DirectoryNode | undefined {
  const bytes = item.content!;
  const node = item.node!;
  if (!sameBytes(hash.sha256(bytes), item.target)) {
    problems.push(`node ${toHex(item.target)}: held in its entry, its bytes do not hash to its id`);
    return undefined;
  }
  if (!sameBytes(nodeBytes(node.level, node.items).bytes, bytes)) {
    problems.push(`node ${toHex(item.target)}: not in the canonical encoding`);
  }
  return node;
}

/** A root held in the journal: well-formed and canonical (its hash is checked per event above). */
function checkJournalRoot(
  id: Uint8Array,
  bytes: Uint8Array,
  problems: string[],
): DirectoryNode | undefined {
  const node = decodeNode(id, bytes);
  if (node === undefined) {
    problems.push(`root ${toHex(id)}: held in the journal, not a well-formed directory node`);
    return undefined;
  }
  if (!sameBytes(nodeBytes(node.level, node.items).bytes, bytes)) {
    problems.push(`root ${toHex(id)}: not in the canonical encoding`);
  }
  return node;
}

async function loadNode(
  reader: Executor,
  id: Uint8Array,
  problems: string[],
  rebuilt: RebuiltNodes,
  entry = false,
): Promise<DirectoryNode | undefined> {
  const stored = await readNodeBytes(reader, id, rebuilt);
  if (stored.missing) {
    problems.push(`node ${toHex(id)}: missing`);
    return undefined;
  }
  const node = stored.bytes === undefined ? undefined : decodeNode(id, stored.bytes);
  if (node === undefined || stored.bytes === undefined) {
    problems.push(`node ${toHex(id)}: not a well-formed directory node`);
    return undefined;
  }
  if (!sameBytes(nodeBytes(node.level, node.items).bytes, stored.bytes)) {
    problems.push(`node ${toHex(id)}: not in the canonical encoding`);
  }
  if (entry && stored.bytes.length <= INLINE_NODE_MAX) {
    problems.push(
      `node ${toHex(id)}: a directory's top of ${stored.bytes.length} bytes stored apart ` +
        `(at most ${INLINE_NODE_MAX} is held in its entry; not canonical)`,
    );
  }
  return node;
}

/**
 * The cut rule, checked node by node: no entry before the last ends a node,
 * and the last does unless the node is the last of its level. Names ascend
 * strictly. A top above level 0 has at least two entries.
 */
function checkNode(
  node: DirectoryNode,
  place: { last: boolean; top: boolean },
  problems: string[],
): void {
  const where = `node ${toHex(node.id)}`;
  const { items, level } = node;
  for (let i = 1; i < items.length; i++) {
    if (compareNames(items[i - 1]!.name, items[i]!.name) >= 0) {
      problems.push(`${where}: names out of order`);
      return;
    }
  }
  for (let i = 0; i < items.length - 1; i++) {
    if (isCut(level, items[i]!.name) || i + 1 >= MAX_NODE_ENTRIES) {
      problems.push(`${where}: cut in the wrong place (not canonical)`);
      return;
    }
  }
  const tail = items.at(-1);
  if (
    !place.last &&
    tail !== undefined &&
    !isCut(level, tail.name) &&
    items.length < MAX_NODE_ENTRIES
  ) {
    problems.push(`${where}: ends where no cut is (not canonical)`);
  }
  if (place.top && level > 0 && items.length < 2) {
    problems.push(`${where}: a directory's top with a single child (not canonical)`);
  }
  if (!place.top && items.length === 0) problems.push(`${where}: an empty inner node`);
}
