/**
 * `apply`: workspace changes, published atomically. New content is stored,
 * the changed directories rewritten, and one journal event appended naming
 * the new root, which makes it current — all in the caller's transaction,
 * inside a savepoint, so that a failure anywhere leaves the previous root
 * current and no row behind. The savepoint is opened on demand, before the
 * first of several writes: an apply whose only write is its event (small
 * files held in a small root: a workflow's step) needs none, since SQLite
 * undoes a failed statement whole. That apply is also built without the
 * tree walk, on the lease's guess (held-edit.ts); any other, and one whose
 * guess the journal refuses, takes the general edit. Where the driver
 * answers its calls now (`WriteScope.runsNow`), an apply built on the guess
 * with every node at hand and its files given whole and small is run
 * before `apply` returns, with no promise (`applyNow`): the held root's one
 * statement with no savepoint, the general edit's rows and event in a
 * savepoint run now.
 */
import { isRunledgerError, RunledgerError } from "../port/errors.js";
import type { HashFunctions } from "../port/hash.js";
import type { JsonObject } from "../port/json.js";
import { checkNames } from "../port/options.js";
import type { WriteScope } from "../transaction/scope.js";
import type { WorkspaceContext } from "./context.js";
import {
  type Content,
  type StoredFile,
  storeFile,
  storeHeldFile,
  storeSmallFile,
  writesWhenStored,
} from "./files.js";
import { editHeld } from "./held-edit.js";
import { idKey } from "./id-key.js";
import { type DirectoryNode, INLINE_NODE_MAX, type Item } from "./node.js";
import { NodeLoader } from "./node-loader.js";
import { NOT_AT_HAND, settleNow } from "./node-work.js";
import { insertObjects, insertObjectsNow, nodeRows, type ObjectRow } from "./object-rows.js";
import { parsePath } from "./paths.js";
import {
  applyPlan,
  type Edit,
  type MissingRule,
  PLACEHOLDER,
  planEdits,
  planWork,
} from "./plan.js";
import type { ApplyResult, RootBase, RootJournal, RootPublisher } from "./root-journal.js";
import {
  type CopySource,
  checkExpectations,
  expectationWork,
  type PathExpectation,
  type PlannedCopy,
  type PlannedExpectation,
  planCopies,
  planExpectations,
  sourceEntry,
  sourceRoot,
} from "./sources.js";
import { builtBelow } from "./trees.js";

export interface ApplyChanges {
  readonly put?: Readonly<Record<string, Content>>;
  readonly delete?: readonly string[];
  /** Entries taken by reference from a root, by target path (each `{ from, at? }`). */
  readonly copy?: Readonly<Record<string, CopySource>>;
}

/** What `apply` takes beside its changes. */
export interface ApplyOptions {
  /** The journal record published with the new root; default a `workspace.apply` record naming the paths. */
  readonly event?: JsonObject;
  /** What must be at each path of the root the apply builds on; else nothing is written (`expectation_failed`). */
  readonly expect?: Readonly<Record<string, PathExpectation>>;
  /** A delete of a path that holds nothing: "error" (default, `path_not_found`) or "ignore". */
  readonly missing?: MissingRule;
  /**
   * The idempotency key of the apply's event (`r.journal.get(key)` finds it):
   * one that names an event already refuses the apply, nothing written
   * (`idempotency_conflict`).
   */
  readonly key?: string;
}

/**
 * What building on a stale guess can fail with: its nodes gone, or paths
 * that differ from the current root's (a delete, a copy's source, an
 * expectation).
 */
const STALE_GUESS = new Set([
  "corrupt",
  "path_not_found",
  "path_conflict",
  "copy_source_not_found",
  "expectation_failed",
]);

/** A failure building on the guess that a stale guess may cause: the apply builds on the head instead. */
function mayBeStaleGuess(error: unknown): boolean {
  return isRunledgerError(error) && STALE_GUESS.has(error.code);
}

/** A copy's entry standing in for the conflict check before its source is read. */
const COPY_PLACEHOLDER: Item = { ...PLACEHOLDER, kind: "directory" };

/** An apply's changes and options, checked before anything is read or written. */
interface PlannedApply {
  readonly puts: readonly { readonly segments: string[]; readonly content: Content }[];
  readonly deletes: readonly string[][];
  readonly copies: readonly PlannedCopy[];
  readonly expectations: readonly PlannedExpectation[];
  readonly missing: MissingRule;
  readonly key: string | undefined;
  /** The event's record, as the journal stores it. */
  readonly event: string;
}

/** What the new root is built from, whichever root the apply builds on. */
interface Edits {
  readonly planned: PlannedApply;
  readonly hash: HashFunctions;
  /** The files put, stored: each path's new entry. */
  readonly stored: readonly [string[], Item][];
  /** The plan, when it does not depend on the root built on (no copies). */
  readonly plan: Map<string, Edit> | undefined;
  /** The top of the root each copy names by `at` (undefined: the root built on). */
  readonly sourceTops: readonly (DirectoryNode | undefined)[];
}

/** What an apply built: its new top, the loader holding the nodes built for it, and the top's bytes when its event holds them. */
interface BuiltRoot {
  readonly loader: NodeLoader;
  readonly top: DirectoryNode;
  readonly rootBytes: Uint8Array | undefined;
}

/** A new root built, the objects it stores, and the event that published it. */
interface Published {
  readonly stored: ToStore;
  readonly result: ApplyResult;
}

/** What an apply writes beside its event, and the nodes it keeps. */
interface ToStore {
  /** The nodes the new root reaches that this apply built. */
  readonly nodes: readonly DirectoryNode[];
  /** The rows to insert: the files' and those nodes' (but a root the event holds). */
  readonly rows: readonly ObjectRow[];
}

/**
 * Applies `changes` in a savepoint of `scope`, publishing the new root through
 * `journal`. A step's apply on a synchronous driver is answered now, with no
 * promise (see `applyNow`); every other, with a promise.
 */
export function applyChanges(
  scope: WriteScope,
  workspace: WorkspaceContext,
  journal: RootJournal,
  changes: ApplyChanges,
  options: ApplyOptions,
): ApplyResult | Promise<ApplyResult> {
  let planned: PlannedApply;
  let now: ApplyResult | typeof STALE | Promise<ApplyResult | typeof STALE> | undefined;
  try {
    planned = planApply(changes, options, journal);
    now = scope.runsNow ? applyNow(scope, workspace, journal, planned) : undefined;
  } catch (error) {
    return Promise.reject(error);
  }
  if (now === undefined) return applyInSavepoint(scope, workspace, journal, planned, true);
  if (now === STALE) return applyInSavepoint(scope, workspace, journal, planned, false);
  if (!(now instanceof Promise)) return now;
  return now.then((published) =>
    published === STALE ? applyInSavepoint(scope, workspace, journal, planned, false) : published,
  );
}

/** The guess was stale: nothing was written, and the apply builds on the head. */
const STALE = Symbol("stale");

/**
 * A step's apply where the scope's statements run now (`WriteScope.runsNow`):
 * built on the lease's guess, every node it reaches at hand and every file
 * given whole and small, then published before this returns, with no
 * promise. A root held whole in its event is built without the tree walk
 * (held-edit.ts) and published by that one statement, with no savepoint:
 * SQLite undoes a failed statement whole. Any other root takes the general
 * edit, and its rows and event are written in a savepoint run now.
 * Undefined, nothing written, where the apply is not of that shape or a
 * node is not at hand (the ordinary way reads it); STALE when the guess
 * was (nothing written); a promise where the event was refused, settling
 * as the ordinary way's publish does.
 */
function applyNow(
  scope: WriteScope,
  workspace: WorkspaceContext,
  journal: RootJournal,
  planned: PlannedApply,
): ApplyResult | typeof STALE | Promise<ApplyResult | typeof STALE> | undefined {
  if (planned.copies.length > 0) return undefined;
  const publisher = journal.at(scope);
  const guess = publisher.guess();
  const root = guess === undefined ? undefined : workspace.nodes.get(idKey(guess.root));
  if (guess === undefined || root === undefined) return undefined;
  const { hash } = workspace;
  const files: ObjectRow[] = [];
  const stored: [string[], Item][] = [];
  for (const { segments, content } of planned.puts) {
    const file = storeSmallFile(content, hash, files);
    if (file === undefined) return undefined;
    stored.push([segments, fileItem(segments, file)]);
  }
  const plan = planEdits(stored, planned.deletes);
  const held =
    files.length === 0 && planned.expectations.length === 0
      ? editHeld(hash, root, plan)
      : undefined;
  if (held !== undefined) {
    const published = publisher.publish(planned.event, guess, held.id, held.bytes, planned.key);
    const kept = (result: ApplyResult | undefined): ApplyResult | typeof STALE =>
      result === undefined ? STALE : keptHeld(workspace, held, result);
    return published instanceof Promise ? published.then(kept) : kept(published);
  }
  return publishBuiltNow(scope, workspace, publisher, planned, { guess, root, plan, files });
}

/** What `applyNow` hands the general edit run now: the guess, its root, the plan and the files' rows. */
interface OnGuess {
  readonly guess: RootBase;
  readonly root: DirectoryNode;
  readonly plan: Map<string, Edit>;
  readonly files: readonly ObjectRow[];
}

/**
 * The general edit on the guess, run now (see `applyNow`): undefined, with
 * nothing read or written, at the first node not at hand; STALE when
 * building on the guess fails as building on a stale guess may
 * (`publishOnGuess`).
 */
function publishBuiltNow(
  scope: WriteScope,
  workspace: WorkspaceContext,
  publisher: RootPublisher,
  planned: PlannedApply,
  { guess, root, plan, files }: OnGuess,
): ApplyResult | typeof STALE | Promise<ApplyResult | typeof STALE> | undefined {
  const loader = loaderOf(scope, workspace);
  let top: DirectoryNode | null | typeof NOT_AT_HAND;
  try {
    const { expectations } = planned;
    if (
      expectations.length > 0 &&
      settleNow(expectationWork(loader, root, expectations)) === NOT_AT_HAND
    ) {
      return undefined;
    }
    top = settleNow(planWork(loader, workspace.hash, root, plan, [], planned.missing));
  } catch (error) {
    if (mayBeStaleGuess(error)) return STALE;
    throw error;
  }
  if (top === NOT_AT_HAND) return undefined;
  // The workspace's top is never removed: the plan's walk answers a node for it.
  const built: BuiltRoot = { loader, top: top!, rootBytes: heldTop(loader, top!) };
  const { nodes, rows } = toStore(files, built);
  const { event, key } = planned;
  const publish = () => publisher.publish(event, guess, built.top.id, built.rootBytes, key);
  // The event first, as the ordinary way writes it: a stale guess writes nothing at all.
  const published =
    rows.length === 0
      ? publish()
      : scope.savepointNow(() => {
          const result = publish();
          if (result !== undefined && !(result instanceof Promise)) insertObjectsNow(scope, rows);
          return result;
        });
  const kept = (result: ApplyResult | undefined): ApplyResult | typeof STALE => {
    if (result === undefined) return STALE;
    workspace.nodes.replace(nodes);
    return { rootId: result.rootId, sequence: result.sequence };
  };
  return published instanceof Promise ? published.then(kept) : kept(published);
}

/** A held root its event published: its node kept for the next edit, and the apply's result. */
function keptHeld(
  workspace: WorkspaceContext,
  top: DirectoryNode,
  result: ApplyResult,
): ApplyResult {
  workspace.nodes.replace([top]);
  return { rootId: result.rootId, sequence: result.sequence };
}

/**
 * The ordinary way: the apply in a savepoint opened on demand. `tryHeld`:
 * whether a held root built on the guess is tried first (not when
 * `applyNow` found that guess stale).
 */
function applyInSavepoint(
  scope: WriteScope,
  workspace: WorkspaceContext,
  journal: RootJournal,
  planned: PlannedApply,
  tryHeld: boolean,
): Promise<ApplyResult> {
  return scope.savepointOnDemand(async (tx) => {
    const publisher = journal.at(tx);
    const held = tryHeld ? heldRoot(workspace, publisher, planned) : undefined;
    if (held !== undefined) {
      const { event, key } = planned;
      const result = await publisher.publish(event, held.guess, held.top.id, held.top.bytes, key);
      if (result !== undefined) return keptHeld(workspace, held.top, result);
    }
    // Large and streamed files are written as they are stored, before the event.
    if (planned.puts.some(({ content }) => writesWhenStored(content))) await tx.guard();
    const files: ObjectRow[] = [];
    const edits = await prepareEdits(tx, workspace, planned, files);
    // A held root refused was built on the guess: the general edit builds on the head at once.
    const guessed = held === undefined && tryHeld;
    const published =
      (guessed ? await publishOnGuess(tx, workspace, publisher, edits, files) : undefined) ??
      (await publishOnHead(tx, workspace, publisher, edits, files));
    return storeBuilt(tx, workspace, published);
  });
}

/**
 * The new root of an apply whose root is held whole in its event
 * (held-edit.ts), built on the lease's guess: publishing it is the apply's
 * only write. Undefined when the apply is not of that shape or the guess's
 * root is not at hand — without a promise, since most applies that are not
 * a step's are not.
 */
function heldRoot(
  workspace: WorkspaceContext,
  publisher: RootPublisher,
  planned: PlannedApply,
): { readonly guess: RootBase; readonly top: DirectoryNode } | undefined {
  if (planned.copies.length > 0 || planned.expectations.length > 0) return undefined;
  const guess = publisher.guess();
  const root = guess === undefined ? undefined : workspace.nodes.get(idKey(guess.root));
  if (guess === undefined || root === undefined) return undefined;
  const { hash } = workspace;
  const stored: [string[], Item][] = [];
  for (const { segments, content } of planned.puts) {
    const file = storeHeldFile(content, hash);
    if (file === undefined) return undefined;
    stored.push([segments, fileItem(segments, file)]);
  }
  const top = editHeld(hash, root, planEdits(stored, planned.deletes));
  return top === undefined ? undefined : { guess, top };
}

/** Checks an apply's changes and options; conflicts are found before anything is written. */
function planApply(
  changes: ApplyChanges,
  options: ApplyOptions,
  journal: RootJournal,
): PlannedApply {
  checkNames(changes, ["put", "delete", "copy"], "apply's changes");
  checkNames(options, ["event", "expect", "missing", "key"], "apply's options");
  const { key } = options;
  if (key !== undefined) journal.checkKey(key);
  const missing = options.missing ?? "error";
  if (missing !== "error" && missing !== "ignore") {
    throw new RunledgerError("invalid_argument", 'apply\'s missing is "error" or "ignore"');
  }
  const { put = {}, delete: paths = [] } = changes as { put?: unknown; delete?: unknown };
  if (typeof put !== "object" || put === null || Array.isArray(put)) {
    throw new RunledgerError("invalid_argument", "apply's put maps each path to its content");
  }
  if (!Array.isArray(paths)) {
    throw new RunledgerError("invalid_argument", "apply's delete is an array of paths");
  }
  // Built by loops, not `.map`: V8's optimized `.map` makes arrays of another
  // shape than the builtin's, so once this function is optimized (a thousand
  // steps or so) every function that had learned these arrays was thrown away
  // and compiled again (measured: four such functions, ~7% of a cold run's CPU).
  const puts: PlannedApply["puts"][number][] = [];
  const placed: [string[], Item][] = [];
  for (const [path, content] of Object.entries(put as Record<string, Content>)) {
    const segments = parsePath(path);
    puts.push({ segments, content });
    placed.push([segments, PLACEHOLDER]);
  }
  const deletes: string[][] = [];
  for (const path of paths as unknown[]) deletes.push(parsePath(path));
  const copies = planCopies(changes.copy);
  const expectations = planExpectations(options.expect);
  // A copy counts as a directory here; one that turns out a file is checked again when built.
  const copied: [string[], Item][] = [];
  for (const { target } of copies) copied.push([target, COPY_PLACEHOLDER]);
  planEdits(placed, deletes, copied);
  const event = journal.text(
    options.event ?? {
      kind: "workspace.apply",
      put: puts.map(({ segments }) => segments.join("/")),
      delete: deletes.map((segments) => segments.join("/")),
      ...(copies.length === 0 ? {} : { copy: copies.map(({ target }) => target.join("/")) }),
    },
  );
  return { puts, deletes, copies, expectations, missing, key, event };
}

/** Stores the files put (their rows join `files`) and reads the roots copies name. */
async function prepareEdits(
  tx: WriteScope,
  workspace: WorkspaceContext,
  planned: PlannedApply,
  files: ObjectRow[],
): Promise<Edits> {
  const { hash } = workspace;
  const stored: [string[], Item][] = [];
  for (const { segments, content } of planned.puts) {
    stored.push([segments, fileItem(segments, await storeFile(tx, content, hash, files))]);
  }
  // Without copies the plan does not depend on the root built on.
  const plan = planned.copies.length === 0 ? planEdits(stored, planned.deletes) : undefined;
  // The roots copies name by `at` are the same whatever the apply builds on.
  const sourceTops = await Promise.all(
    planned.copies.map(({ at }) =>
      at === undefined ? undefined : sourceRoot(tx, workspace.journal, loaderOf(tx, workspace), at),
    ),
  );
  return { planned, hash, stored, plan, sourceTops };
}

/**
 * Builds on the lease's guess of the current root, when it has one and its
 * root is at hand (a root evicted, or undone by a rollback, is not read: the
 * head is one read and holds a small root). A guess is never trusted: when
 * it is stale, building on it may fail (its nodes gone) or publishing
 * refuses it (nothing is written); either way undefined, and the apply
 * starts again from the current root read under the write lock.
 */
async function publishOnGuess(
  tx: WriteScope,
  workspace: WorkspaceContext,
  publisher: RootPublisher,
  edits: Edits,
  files: readonly ObjectRow[],
): Promise<Published | undefined> {
  const guess = publisher.guess();
  const loader = loaderOf(tx, workspace);
  const root = guess === undefined ? undefined : loader.known(guess.root);
  if (guess === undefined || root === undefined) return undefined;
  const built = await buildOn(edits, loader, root).catch((error: unknown) => {
    if (mayBeStaleGuess(error)) return undefined;
    throw error;
  });
  if (built === undefined) return undefined;
  return publish(tx, publisher, edits, guess, built, files);
}

/** Builds on the current root, read under the write lock: its publishing cannot be refused. */
async function publishOnHead(
  tx: WriteScope,
  workspace: WorkspaceContext,
  publisher: RootPublisher,
  edits: Edits,
  files: readonly ObjectRow[],
): Promise<Published> {
  const head = await publisher.head();
  const loader = loaderOf(tx, workspace);
  const built = await buildOn(
    edits,
    loader,
    await loader.root(head.root, { held: head.rootBytes }),
  );
  const published = await publish(tx, publisher, edits, head, built, files);
  if (published === undefined) {
    throw new RunledgerError(
      "corrupt",
      "the journal refused a new root computed under the write lock; run verify",
    );
  }
  return published;
}

/**
 * Publishes `built` as the event after `base`, the objects it stores
 * reckoned first (they decide whether the savepoint must be open).
 * Undefined, with nothing written, when `base` is no longer the newest event.
 */
async function publish(
  tx: WriteScope,
  publisher: RootPublisher,
  edits: Edits,
  base: RootBase,
  built: BuiltRoot,
  files: readonly ObjectRow[],
): Promise<Published | undefined> {
  const stored = await objectsToStore(tx, files, built);
  const { event, key } = edits.planned;
  const result = await publisher.publish(event, base, built.top.id, built.rootBytes, key);
  return result === undefined ? undefined : { stored, result };
}

/** The new top, built from `root` with the nodes `loader` has at hand. */
async function buildOn(edits: Edits, loader: NodeLoader, root: DirectoryNode): Promise<BuiltRoot> {
  const { planned, hash } = edits;
  // Awaited only when the tree work had to read a node (see node-work.ts).
  const checked = checkExpectations(loader, root, planned.expectations);
  if (checked instanceof Promise) await checked;
  const plan = edits.plan ?? (await copyPlan(edits, loader, root));
  const built = applyPlan(loader, hash, root, plan, [], planned.missing);
  const top = (built instanceof Promise ? await built : built)!;
  return { loader, top, rootBytes: heldTop(loader, top) };
}

/** The plan with each copy's entry, read in its source root: `at`'s, or the one built on. */
async function copyPlan(
  edits: Edits,
  loader: NodeLoader,
  root: DirectoryNode,
): Promise<Map<string, Edit>> {
  const copied: [string[], Item][] = [];
  for (const [i, { target, from }] of edits.planned.copies.entries()) {
    const top = edits.sourceTops[i] ?? root;
    copied.push([target, await sourceEntry(loader, edits.hash, top, from, target.at(-1)!)]);
  }
  return planEdits(edits.stored, edits.planned.deletes, copied);
}

/**
 * The new root's bytes when its event holds them (roots.ts): a root this
 * apply built, small enough to be held. A root kept from before (an edit
 * that changed nothing, or left one child of a top) is named, not held.
 */
function heldTop(loader: NodeLoader, top: DirectoryNode): Uint8Array | undefined {
  const { bytes } = top;
  return bytes !== undefined && bytes.length <= INLINE_NODE_MAX && loader.built(top.id) === top
    ? bytes
    : undefined;
}

/**
 * The apply's new objects — its files' and the nodes its root reaches, but a
 * root its event holds. When there are any, the event is not the apply's
 * only write: the savepoint is opened before it.
 */
async function objectsToStore(
  tx: WriteScope,
  files: readonly ObjectRow[],
  built: BuiltRoot,
): Promise<ToStore> {
  const stored = toStore(files, built);
  if (stored.rows.length > 0) await tx.guard();
  return stored;
}

/** The apply's new objects (see `objectsToStore`). */
function toStore(files: readonly ObjectRow[], built: BuiltRoot): ToStore {
  const nodes = builtBelow(built.loader, built.top);
  const held = built.rootBytes !== undefined;
  const rows = [...files, ...nodeRows(held ? nodes.filter((node) => node !== built.top) : nodes)];
  return { nodes, rows };
}

/** Writes the apply's new objects and keeps the nodes its root reaches. */
async function storeBuilt(
  tx: WriteScope,
  workspace: WorkspaceContext,
  { stored, result }: Published,
): Promise<ApplyResult> {
  await insertObjects(tx, stored.rows);
  workspace.nodes.replace(stored.nodes);
  return { rootId: result.rootId, sequence: result.sequence };
}

/** The entry of a file stored at `segments`. */
function fileItem(segments: readonly string[], { digest, size, content }: StoredFile): Item {
  const name = segments.at(-1)!;
  return content === undefined
    ? { name, kind: "file", target: digest, size }
    : { name, kind: "file", target: digest, size, content };
}

function loaderOf(tx: WriteScope, workspace: WorkspaceContext): NodeLoader {
  return new NodeLoader(tx, workspace.nodes, workspace.journal);
}
