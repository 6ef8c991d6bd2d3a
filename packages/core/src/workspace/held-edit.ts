/**
 * The commonest apply, built without the tree walk: a workflow's step puts
 * a few small files into small directories. When every directory the plan
 * reaches is one leaf node held in its parent's entry, the root is one leaf
 * small enough for its event to hold, and every file put is small enough to
 * be held in its entry, the new root is a few leaves edited in place — no
 * node to read, none to split, no row but the event. That is what this
 * builds, synchronously, from the plan (plan.ts).
 *
 * It decides nothing of its own about bytes: each node is encoded by
 * `encodeNode` and each directory entry made by `directoryItem`, its changes
 * merged and its cut rule checked by trees.ts's own `merge` and
 * `fitsOneNode`, as the general edit does, so the nodes and ids are the
 * same; it only knows when the general edit would make exactly one leaf of
 * each directory. Anything else — a directory stored as a row or above one
 * node, a leaf that would split or outgrow its entry, a conflict, a delete
 * of nothing, no change at all, an emptied root — answers undefined, and the
 * general edit does the apply, refusals included.
 */
import type { HashFunctions } from "../port/hash.js";
import { compareNames, type DirectoryNode, INLINE_NODE_MAX } from "./node.js";
import { directoryItem, encodeNode } from "./node-encoding.js";
import type { Edit } from "./plan.js";
import { type Change, fitsOneNode, leafEntry, merge } from "./trees.js";

/**
 * The new root from `root` with the plan's files and deletes, when all of it
 * is held (above); undefined when the general edit must build it.
 */
export function editHeld(
  hash: HashFunctions,
  root: DirectoryNode,
  plan: Map<string, Edit>,
): DirectoryNode | undefined {
  // An apply of no change keeps the root it builds on, which the general edit names rather than holds.
  if (plan.size === 0) return undefined;
  const top = editLeaf(hash, root, plan);
  // An emptied root is the canonical empty node, which the general edit names rather than holds.
  if (top === undefined || top === null || top.items.length === 0) return undefined;
  return top.bytes!.length <= INLINE_NODE_MAX ? top : undefined;
}

/**
 * One directory's new leaf (null: a directory emptied, to be removed), or
 * undefined when it is not held or would not stay one held leaf. The
 * changes are found as the general plan's walk finds them (plan.ts), every
 * refusal of it answered undefined instead.
 */
function editLeaf(
  hash: HashFunctions,
  node: DirectoryNode | null,
  edits: Map<string, Edit>,
): DirectoryNode | null | undefined {
  if (node !== null && node.level !== 0) return undefined;
  const olds = node === null ? [] : node.items;
  const changes: Change[] = [];
  for (const name of [...edits.keys()].sort(compareNames)) {
    const existing = leafEntry(olds, name);
    const edit = edits.get(name)!;
    if (edit.kind === "file") {
      if (existing?.kind === "directory" || edit.item.content === undefined) return undefined;
      changes.push([name, edit.item]);
    } else if (edit.kind === "delete") {
      if (existing === undefined) return undefined;
      changes.push([name, null]);
    } else if (edit.kind === "directory") {
      if (existing?.kind === "file") return undefined;
      const below = existing === undefined ? null : existing.node;
      if (below === undefined) return undefined;
      const after = editLeaf(hash, below, edit.edits);
      if (after === undefined) return undefined;
      if (after !== null) {
        const item = directoryItem(name, after, hash);
        if (item.content === undefined) return undefined;
        changes.push([name, item]);
      } else if (existing !== undefined) {
        changes.push([name, null]);
      }
    } else {
      return undefined;
    }
  }
  const items = merge(olds, changes);
  if (items.length === 0) return null;
  if (!fitsOneNode(0, items)) return undefined;
  // The node replaced is the new one's base, as the general edit has it (trees.ts).
  return encodeNode(0, items, hash, node ?? undefined);
}
