/**
 * An apply's changes as a plan over directories: copies, puts and deletes
 * grouped by path, checked for conflicts before anything is written, then
 * carried out from the deepest directories up — each changed directory
 * edited (trees.ts), its new top node becoming the change in its parent. A
 * directory left empty is removed from its parent; the workspace's top
 * stays, empty. The walk is NodeWork (node-work.ts): no promise unless a node
 * must be read.
 *
 * A copy places an entry taken from some root — a file, or a directory by
 * its top node — at its target, replacing whatever is there: by reference,
 * so nothing below it is read or written. Puts and deletes inside a copied
 * directory apply to the copy (the copy first, then the changes inside it);
 * a put or delete at the copy's own path, or at one of its parents, is a
 * conflict.
 */
import { RunledgerError } from "../port/errors.js";
import type { HashFunctions } from "../port/hash.js";
import { compareNames, type DirectoryNode, type Item } from "./node.js";
import { directoryItem, EMPTY_NODE } from "./node-encoding.js";
import type { NodeLoader } from "./node-loader.js";
import { type NodeWork, settle } from "./node-work.js";
import { type Change, editWork, lookupWork } from "./trees.js";

/** One planned change below a directory, by entry name. */
export type Edit =
  | { readonly kind: "file"; readonly item: Item }
  | { readonly kind: "delete" }
  | { readonly kind: "directory"; readonly edits: Map<string, Edit> }
  /** An entry copied from a root; `edits`, changes inside a copied directory. */
  | { readonly kind: "copy"; readonly item: Item; readonly edits: Map<string, Edit> };

/** What a delete of a path that holds nothing does: refuse the apply, or nothing. */
export type MissingRule = "error" | "ignore";

/** A file entry standing in for content not stored yet, for the conflict check alone. */
export const PLACEHOLDER: Item = {
  name: "",
  kind: "file",
  target: new Uint8Array(32),
  size: 0,
};

/**
 * Builds the nested plan; a path given twice, or as both file and directory,
 * is a conflict. Copies are placed first, so that puts and deletes below a
 * copied directory land inside the copy.
 */
export function planEdits(
  puts: ReadonlyArray<readonly [segments: string[], item: Item]>,
  deletes: ReadonlyArray<string[]>,
  copies: ReadonlyArray<readonly [segments: string[], item: Item]> = [],
): Map<string, Edit> {
  const top = new Map<string, Edit>();
  const place = (segments: string[], leaf: Edit) => {
    let level = top;
    segments.forEach((segment, i) => {
      const existing = level.get(segment);
      if (i === segments.length - 1) {
        if (existing !== undefined)
          conflict(segments, "named twice, or both as a file and a directory");
        level.set(segment, leaf);
        return;
      }
      if (existing === undefined) {
        const edits = new Map<string, Edit>();
        level.set(segment, { kind: "directory", edits });
        level = edits;
      } else if (existing.kind === "directory") {
        level = existing.edits;
      } else if (existing.kind === "copy" && existing.item.kind === "directory") {
        if (leaf.kind === "copy") conflict(segments, "copied inside another copy's target");
        level = existing.edits;
      } else {
        conflict(segments, "a parent directory is also written or deleted as a file");
      }
    });
  };
  for (const [segments, item] of copies) place(segments, { kind: "copy", item, edits: new Map() });
  for (const [segments, item] of puts) place(segments, { kind: "file", item });
  for (const segments of deletes) place(segments, { kind: "delete" });
  return top;
}

/**
 * Carries out a plan on one directory (null: it does not exist yet) and
 * returns its new top node, or null when a directory other than the
 * workspace's top ends up empty. A promise only when a node must be read.
 */
export function applyPlan(
  loader: NodeLoader,
  hash: HashFunctions,
  directory: DirectoryNode | null,
  edits: Map<string, Edit>,
  prefix: string[],
  missing: MissingRule = "error",
): DirectoryNode | null | Promise<DirectoryNode | null> {
  return settle(loader, planWork(loader, hash, directory, edits, prefix, missing));
}

/** `applyPlan` as NodeWork (node-work.ts). */
export function* planWork(
  loader: NodeLoader,
  hash: HashFunctions,
  directory: DirectoryNode | null,
  edits: Map<string, Edit>,
  prefix: string[],
  missing: MissingRule,
): NodeWork<DirectoryNode | null> {
  const changes: Change[] = [];
  const names = [...edits.keys()].sort(compareNames);
  for (const name of names) {
    const edit = edits.get(name)!;
    const path = [...prefix, name];
    const existing = directory === null ? undefined : yield* lookupWork(loader, directory, name);
    if (edit.kind === "file") {
      if (existing?.kind === "directory") conflict(path, "a directory is there; delete it first");
      changes.push([name, { ...edit.item, name }]);
    } else if (edit.kind === "delete") {
      if (existing !== undefined) {
        changes.push([name, null]);
      } else if (missing === "error") {
        throw new RunledgerError(
          "path_not_found",
          `cannot delete ${path.join("/")}: nothing is there (pass { missing: "ignore" } to ` +
            "allow that); nothing was written",
          { details: { path: path.join("/") } },
        );
      }
    } else if (edit.kind === "copy" && edit.edits.size === 0) {
      // By reference: the entry as its source root has it, under its new name.
      changes.push([name, { ...edit.item, name }]);
    } else {
      // Changes inside a directory: as it is here, or as a copy placed it.
      const base = edit.kind === "copy" ? edit.item : existing;
      if (base?.kind === "file") conflict(path, "a file is there; delete it first");
      const below =
        base === undefined ? null : (base.node ?? loader.known(base.target) ?? (yield base.target));
      const after = yield* planWork(loader, hash, below, edit.edits, path, missing);
      if (after !== null) {
        changes.push([name, directoryItem(name, after, hash)]);
      } else if (existing !== undefined) {
        changes.push([name, null]);
      }
    }
  }
  const top = yield* editWork(loader, hash, directory ?? EMPTY_NODE, changes);
  if (top.items.length === 0 && prefix.length > 0) return null;
  return top;
}

function conflict(segments: readonly string[], why: string): never {
  throw new RunledgerError("path_conflict", `${segments.join("/")}: ${why}; nothing was written`, {
    details: { path: segments.join("/") },
  });
}
