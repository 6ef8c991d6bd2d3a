/**
 * Where a copy comes from, and what an apply expects to find. A copy names
 * a path in a root — the one the apply builds on, or any root the run still
 * retains — and takes the entry there by reference: a file by its digest, a
 * directory by its top node, so copying a directory of 100,000 files reads
 * only the nodes on the way to it. An expectation names a path in the root
 * the apply builds on and what must be there; when any fails, nothing is
 * written.
 */
import { fromHex, toHex } from "../port/bytes.js";
import type { Executor } from "../port/driver.js";
import { isRunledgerError, RunledgerError } from "../port/errors.js";
import type { HashFunctions } from "../port/hash.js";
import { checkNames } from "../port/options.js";
import type { DirectoryNode, Item } from "./node.js";
import { directoryItem } from "./node-encoding.js";
import type { NodeLoader } from "./node-loader.js";
import { settle } from "./node-work.js";
import { parseDirectory, parsePath } from "./paths.js";
import type { JournalRoots } from "./root-journal.js";
import { lookup, lookupWork } from "./trees.js";

/** A root of the run: by its id (hex), or as the event with this sequence recorded it. */
export type RootPoint = { readonly root: string } | { readonly sequence: number };

/** What `apply`'s `copy` takes for each target path. */
export interface CopySource {
  /** The file or directory to copy ("" for the whole root). */
  readonly from: string;
  /** The root it is read in; default the root the apply builds on. */
  readonly at?: RootPoint;
}

/** What `apply`'s `expect` takes for each path: nothing there, something there, or a file with this digest. */
export type PathExpectation = "absent" | "present" | { readonly digest: string };

/** A copy, checked: its target's segments, its source's segments and root. */
export interface PlannedCopy {
  readonly target: string[];
  readonly from: string[];
  readonly at: RootPoint | undefined;
}

/** Checks a copy set before anything is read or written. */
export function planCopies(copy: unknown): PlannedCopy[] {
  if (copy === undefined) return [];
  if (typeof copy !== "object" || copy === null || Array.isArray(copy)) {
    throw new RunledgerError(
      "invalid_argument",
      "apply's copy maps each target path to { from, at? }",
    );
  }
  return Object.entries(copy as Record<string, unknown>).map(([target, source]) => {
    const where = `apply's copy to ${JSON.stringify(target)}`;
    checkNames(source, ["from", "at"], where);
    const { from, at } = (source ?? {}) as Partial<CopySource>;
    if (typeof from !== "string") {
      throw new RunledgerError(
        "invalid_argument",
        `${where} needs from: a path in the source root`,
      );
    }
    return { target: parsePath(target), from: parseDirectory(from), at: rootPoint(at, where) };
  });
}

/** A RootPoint given by a caller, checked; undefined when none was given. */
export function rootPoint(at: unknown, where: string): RootPoint | undefined {
  if (at === undefined) return undefined;
  const keys = typeof at === "object" && at !== null ? Object.keys(at) : [];
  const value = (at as Record<string, unknown> | null)?.[keys[0] ?? ""];
  if (keys.length === 1 && keys[0] === "root" && typeof value === "string") {
    if (!/^[0-9a-f]{64}$/.test(value)) {
      throw new RunledgerError(
        "invalid_argument",
        `${where}: a root id is 64 lower-case hex characters; got ${JSON.stringify(value)}`,
      );
    }
    return { root: value };
  }
  if (
    keys.length === 1 &&
    keys[0] === "sequence" &&
    Number.isSafeInteger(value) &&
    (value as number) >= 1
  ) {
    return { sequence: value as number };
  }
  throw new RunledgerError(
    "invalid_argument",
    `${where}: at is { root: <64 hex> } or { sequence: <a whole number >= 1> }`,
  );
}

/** The top node of a root of the run, by id or by event; `root_not_found` when the run no longer has it. */
export async function rootAt(
  executor: Executor,
  journal: JournalRoots,
  loader: NodeLoader,
  at: RootPoint,
): Promise<DirectoryNode> {
  if ("root" in at) return loader.root(fromHex(at.root), { named: at.root });
  const ref = await journal.eventRoot(executor, at.sequence);
  if (ref === undefined) {
    throw new RunledgerError(
      "root_not_found",
      `event ${at.sequence} is not in the journal (never written, or pruned); name a root the run still holds (history() lists them)`,
      { details: { sequence: at.sequence } },
    );
  }
  return loader.root(ref.id, { held: ref.bytes });
}

/** The top node of a root a copy names; `copy_source_not_found` when the run no longer has it. */
export async function sourceRoot(
  executor: Executor,
  journal: JournalRoots,
  loader: NodeLoader,
  at: RootPoint,
): Promise<DirectoryNode> {
  try {
    return await rootAt(executor, journal, loader, at);
  } catch (error) {
    if (!isRunledgerError(error, "root_not_found")) throw error;
    if ("sequence" in at) {
      throw sourceNotFound(
        `event ${at.sequence} is not in the journal (never written, or pruned)`,
        { sequence: at.sequence },
        error,
      );
    }
    throw sourceNotFound(
      `the run has no root ${at.root} (never written, or collected)`,
      { root: at.root },
      error,
    );
  }
}

/** The entry at `from` in `top`, named `name`: a directory as its top node's entry. */
export async function sourceEntry(
  loader: NodeLoader,
  hash: HashFunctions,
  top: DirectoryNode,
  from: readonly string[],
  name: string,
): Promise<Item> {
  if (from.length === 0) return directoryItem(name, top, hash);
  let entry: Item | undefined;
  let directory = top;
  for (const [i, segment] of from.entries()) {
    entry = await lookup(loader, directory, segment);
    if (entry === undefined || (i < from.length - 1 && entry.kind !== "directory")) {
      throw sourceNotFound(`nothing at ${JSON.stringify(from.join("/"))} in the source root`, {
        from: from.join("/"),
      });
    }
    if (i < from.length - 1) directory = await loader.directory(entry);
  }
  return { ...entry!, name };
}

/** An expectation, checked: its path's segments and what must be there. */
export interface PlannedExpectation {
  readonly path: string[];
  readonly expected: PathExpectation;
}

/** Checks an expect set before anything is read or written. */
export function planExpectations(expect: unknown): PlannedExpectation[] {
  if (expect === undefined) return [];
  if (typeof expect !== "object" || expect === null || Array.isArray(expect)) {
    throw new RunledgerError(
      "invalid_argument",
      "apply's expect maps each path to what must be there",
    );
  }
  return Object.entries(expect as Record<string, unknown>).map(([path, expected]) => {
    const where = `apply's expectation for ${JSON.stringify(path)}`;
    if (expected === "absent" || expected === "present") return { path: parsePath(path), expected };
    checkNames(expected, ["digest"], where);
    const digest = (expected as { digest?: unknown }).digest;
    if (typeof digest !== "string" || !/^[0-9a-f]{64}$/.test(digest)) {
      throw new RunledgerError(
        "invalid_argument",
        `${where} is "absent", "present" or { digest: <64 lower-case hex> }`,
      );
    }
    return { path: parsePath(path), expected: { digest } };
  });
}

/** What an expectation found: nothing, a directory, or a file with its digest. */
export type Found =
  | "absent"
  | { readonly kind: "directory" }
  | { readonly kind: "file"; readonly digest: string };

/**
 * Checks every expectation against `top`; throws `expectation_failed` naming
 * each one that fails (what was expected, what was found). A promise only
 * when a node must be read.
 */
export function checkExpectations(
  loader: NodeLoader,
  top: DirectoryNode,
  expectations: readonly PlannedExpectation[],
): void | Promise<void> {
  if (expectations.length === 0) return;
  return settle(loader, expectationWork(loader, top, expectations));
}

/** `checkExpectations` as NodeWork (node-work.ts). */
export function* expectationWork(
  loader: NodeLoader,
  top: DirectoryNode,
  expectations: readonly PlannedExpectation[],
): Generator<Uint8Array, void, DirectoryNode> {
  const failures: { path: string; expected: PathExpectation; found: Found }[] = [];
  for (const { path, expected } of expectations) {
    let entry: Item | undefined;
    let directory: DirectoryNode | undefined = top;
    for (const segment of path) {
      entry = directory === undefined ? undefined : yield* lookupWork(loader, directory, segment);
      directory =
        entry?.kind === "directory"
          ? (entry.node ?? loader.known(entry.target) ?? (yield entry.target))
          : undefined;
    }
    const found: Found =
      entry === undefined
        ? "absent"
        : entry.kind === "file"
          ? { kind: "file", digest: toHex(entry.target) }
          : { kind: "directory" };
    const met =
      expected === "absent"
        ? found === "absent"
        : expected === "present"
          ? found !== "absent"
          : found !== "absent" && found.kind === "file" && found.digest === expected.digest;
    if (!met) failures.push({ path: path.join("/"), expected, found });
  }
  if (failures.length > 0) {
    const listed = failures
      .map(
        (f) => `${f.path}: expected ${describeFound(f.expected)}, found ${describeFound(f.found)}`,
      )
      .join("; ");
    throw new RunledgerError(
      "expectation_failed",
      `the apply's expectations failed (${listed}); nothing was written — read the paths again and decide`,
      { details: { failures } },
    );
  }
}

function describeFound(value: PathExpectation | Found): string {
  if (value === "absent") return "nothing";
  if (value === "present") return "something";
  if ("kind" in value)
    return value.kind === "file" ? `a file with digest ${value.digest}` : "a directory";
  return `a file with digest ${value.digest}`;
}

function sourceNotFound(
  why: string,
  details: Record<string, unknown>,
  cause?: unknown,
): RunledgerError {
  return new RunledgerError(
    "copy_source_not_found",
    `cannot copy: ${why}; nothing was written — copy from a root the run still retains (see history())`,
    cause === undefined ? { details } : { details, cause },
  );
}
