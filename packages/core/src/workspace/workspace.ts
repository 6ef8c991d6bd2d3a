/**
 * The workspace API a run transaction or snapshot exposes: reads, history,
 * apply, pins, prune and GC over the content-addressed tree.
 */
import { fromHex, toHex } from "../port/bytes.js";
import type { InjectedContext } from "../port/context.js";
import type { Executor } from "../port/driver.js";
import { isRunledgerError, RunledgerError } from "../port/errors.js";
import type { JsonObject } from "../port/json.js";
import { keysetRows } from "../port/keyset.js";
import { checkNames } from "../port/options.js";
import type { CallbackScope, WriteScope } from "../transaction/scope.js";
import type { WorkspaceContext } from "./context.js";
import { diffTrees, type WorkspaceChange } from "./diff.js";
import { type Content, readFile, readFiles, storeFile, streamFile } from "./files.js";
import { collectGarbage, type GarbageReport, pruneJournal } from "./gc.js";
import { type DirectoryNode, INLINE_NODE_MAX, type Item, nodeBytes } from "./node.js";
import { NodeLoader } from "./node-loader.js";
import { BYTES, insertObjects, nodeRows, type ObjectRow } from "./object-rows.js";
import { parseDirectory, parsePath } from "./paths.js";
import { applyPlan, type MissingRule, PLACEHOLDER, planEdits } from "./plan.js";
import type { RootJournal } from "./publish.js";
import { readHead } from "./roots.js";
import {
  type CopySource,
  checkExpectations,
  type PathExpectation,
  planCopies,
  planExpectations,
  type RootPoint,
  rootAt,
  rootPoint,
  sourceEntry,
  sourceRoot,
} from "./sources.js";
import { builtBelow, entries, lookup } from "./trees.js";

export interface WorkspaceEntry {
  readonly name: string;
  readonly path: string;
  readonly kind: "file" | "directory";
  /** Files only: the content's size in bytes and SHA-256 (hex). */
  readonly size?: number;
  readonly digest?: string;
}

export interface WorkspaceFile {
  readonly path: string;
  readonly size: number;
  readonly digest: string;
}

export interface AtRoot {
  /** A root id (hex); default the current root. */
  readonly root?: string;
}

export interface HistoryEntry {
  readonly sequence: number;
  readonly eventId: string;
  readonly rootId: string;
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

/** A copy's entry standing in for the conflict check before its source is read. */
const COPY_PLACEHOLDER: Item = { ...PLACEHOLDER, kind: "directory" };
const HISTORY =
  "SELECT sequence, event_id, root_id FROM journal WHERE sequence > ? ORDER BY sequence LIMIT ?";
const PINS = "SELECT name, root_id FROM workspace_pin ORDER BY name";

/** The one option a read at a root takes. */
const AT_ROOT = ["root"];

/**
 * Snapshot reads of the workspace at the current root or any other. Each
 * call that answers a promise is an operation of the scope (scope.ts): the
 * callback must await it. Streams are read by the callback as it goes.
 */
export class WorkspaceReader {
  protected readonly executor: CallbackScope;
  protected readonly workspace: WorkspaceContext;

  constructor(scope: CallbackScope, workspace: WorkspaceContext) {
    this.executor = scope;
    this.workspace = workspace;
  }

  /** The current root's id (hex). */
  currentRoot(): Promise<string> {
    return this.executor.track(currentRootId(this.executor).then(toHex));
  }

  /** A file's whole content. For large files use `stream`. */
  read(path: string, options: AtRoot = {}): Promise<Uint8Array> {
    return this.executor.track(this.#read(path, options));
  }

  async #read(path: string, options: AtRoot): Promise<Uint8Array> {
    checkNames(options, AT_ROOT, "read's options");
    const file = await this.#file(path, options);
    return file.content?.slice() ?? readFile(this.executor, file.target);
  }

  /**
   * Many files' contents at one root, in the order of `paths`: the paths
   * resolved against one reading of the root, the contents fetched a few
   * statements at a time rather than one a file. Every path must be a file
   * (`path_not_found`, `not_a_file` otherwise, naming it).
   */
  readMany(paths: readonly string[], options: AtRoot = {}): Promise<Uint8Array[]> {
    return this.executor.track(this.#readMany(paths, options));
  }

  async #readMany(paths: readonly string[], options: AtRoot): Promise<Uint8Array[]> {
    checkNames(options, AT_ROOT, "readMany's options");
    if (!Array.isArray(paths)) {
      throw new RunledgerError("invalid_argument", "readMany takes an array of file paths");
    }
    const parsed = paths.map((path) => parsePath(path));
    const loader = this.loader();
    const top = await this.rootNode(loader, options.root);
    const files: Item[] = [];
    for (const [i, segments] of parsed.entries()) {
      files.push(fileItem(await resolveFrom(loader, top, segments), paths[i]!));
    }
    const stored = files.filter((file) => file.content === undefined);
    const contents = await readFiles(
      this.executor,
      stored.map((file) => file.target),
    );
    let next = 0;
    return files.map((file) => file.content?.slice() ?? contents[next++]!);
  }

  /** A file's content one piece at a time; consume it inside the callback. */
  async *stream(path: string, options: AtRoot = {}): AsyncGenerator<Uint8Array> {
    checkNames(options, AT_ROOT, "stream's options");
    const file = await this.#file(path, options);
    if (file.content !== undefined) yield file.content.slice();
    else yield* streamFile(this.executor, file.target);
  }

  /**
   * What is at a path: a file (size, digest) or a directory. Nothing there
   * is `path_not_found`, or undefined with `{ missing: "undefined" }`.
   */
  stat(path: string, options?: AtRoot & { readonly missing?: "error" }): Promise<WorkspaceEntry>;
  stat(
    path: string,
    options: AtRoot & { readonly missing: "undefined" },
  ): Promise<WorkspaceEntry | undefined>;
  stat(
    path: string,
    options: AtRoot & { readonly missing?: "error" | "undefined" } = {},
  ): Promise<WorkspaceEntry | undefined> {
    return this.executor.track(this.#stat(path, options));
  }

  async #stat(
    path: string,
    options: AtRoot & { readonly missing?: "error" | "undefined" },
  ): Promise<WorkspaceEntry | undefined> {
    checkNames(options, ["root", "missing"], "stat's options");
    const { missing = "error" } = options;
    if (missing !== "error" && missing !== "undefined") {
      throw new RunledgerError("invalid_argument", 'stat\'s missing is "error" or "undefined"');
    }
    const segments = parsePath(path);
    const found = await this.#resolve(segments, options);
    if (found === undefined) {
      if (missing === "undefined") return undefined;
      throw notFound(path);
    }
    return describe(found, segments.join("/"));
  }

  /** The entries of a directory ("" or omitted: the top), in name order. */
  list(directory?: string, options: AtRoot = {}): Promise<WorkspaceEntry[]> {
    return this.executor.track(this.#list(directory, options));
  }

  async #list(directory: string | undefined, options: AtRoot): Promise<WorkspaceEntry[]> {
    const out: WorkspaceEntry[] = [];
    for await (const entry of this.entries(directory, options)) out.push(entry);
    return out;
  }

  /** The entries of a directory in name order, streamed a node at a time. */
  async *entries(directory?: string, options: AtRoot = {}): AsyncGenerator<WorkspaceEntry> {
    checkNames(options, AT_ROOT, "list's options");
    const segments = parseDirectory(directory);
    const found = await this.#resolve(segments, options);
    if (found === undefined) throw notFound(directory ?? "");
    if (found.kind !== "directory") {
      throw new RunledgerError("not_a_directory", `${directory} is a file; use read or stat`);
    }
    const loader = this.loader();
    const prefix = segments.length === 0 ? "" : `${segments.join("/")}/`;
    for await (const item of entries(loader, await loader.directory(found))) {
      yield describe(item, prefix + item.name);
    }
  }

  /** Every file below a directory, depth first in name order. */
  async *walk(directory?: string, options: AtRoot = {}): AsyncGenerator<WorkspaceFile> {
    checkNames(options, AT_ROOT, "walk's options");
    const segments = parseDirectory(directory);
    const start = await this.#resolve(segments, options);
    if (start === undefined) throw notFound(directory ?? "");
    if (start.kind === "file") {
      yield describe(start, segments.join("/")) as WorkspaceFile;
      return;
    }
    const loader = this.loader();
    yield* walkTree(
      loader,
      await loader.directory(start),
      segments.length === 0 ? "" : `${segments.join("/")}/`,
    );
  }

  /**
   * The files that differ from one root to another, in path order: each
   * side `{ root }` (an id) or `{ sequence }` (the root that event
   * recorded). Subtrees whose ids are equal on both sides are not read.
   * A side the run no longer holds is `root_not_found`.
   */
  async *diff(from: RootPoint, to: RootPoint): AsyncGenerator<WorkspaceChange> {
    const sides = [side(from, "diff's from"), side(to, "diff's to")];
    const loader = this.loader();
    const [a, b] = [
      await rootAt(this.executor, loader, sides[0]!),
      await rootAt(this.executor, loader, sides[1]!),
    ];
    yield* diffTrees(loader, a, b);
  }

  /** The roots in journal order: each event whose root differs from the one before it. */
  async *history(): AsyncGenerator<HistoryEntry> {
    let previous: string | undefined;
    const events = keysetRows({
      start: 0,
      page: async (after, limit) => (await this.executor.execute(HISTORY, [after, limit])).rows,
      keyOf: (row) => Number(row.sequence),
      limit: 500,
    });
    for await (const row of events) {
      const id = toHex(row.root_id as Uint8Array);
      if (id !== previous) {
        yield { sequence: Number(row.sequence), eventId: String(row.event_id), rootId: id };
        previous = id;
      }
    }
  }

  /** Named pins that keep roots from garbage collection. */
  pins(): Promise<{ name: string; rootId: string }[]> {
    return this.executor.track(this.#pins());
  }

  async #pins(): Promise<{ name: string; rootId: string }[]> {
    const { rows } = await this.executor.execute(PINS);
    return rows.map((row) => ({
      name: String(row.name),
      rootId: toHex(row.root_id as Uint8Array),
    }));
  }

  protected loader(): NodeLoader {
    return new NodeLoader(this.executor, this.workspace.nodes);
  }

  /** A root (default: the current one) as a node, or `root_not_found`. */
  protected async rootNode(loader: NodeLoader, root: string | undefined): Promise<DirectoryNode> {
    if (root === undefined) {
      const head = await readHead(this.executor);
      return loader.root(checkedRootId(head.root), head.rootNode);
    }
    return loader.loadRoot(parseRootId(root), root);
  }

  /** The entry at a path: a directory entry for the root itself when `segments` is empty. */
  async #resolve(segments: readonly string[], options: AtRoot): Promise<Item | undefined> {
    const loader = this.loader();
    return resolveFrom(loader, await this.rootNode(loader, options.root), segments);
  }

  async #file(path: string, options: AtRoot): Promise<Item> {
    return fileItem(await this.#resolve(parsePath(path), options), path);
  }
}

/** A side of a diff: a RootPoint, which unlike a copy's `at` has no default. */
function side(at: unknown, where: string): RootPoint {
  const point = rootPoint(at, where);
  if (point === undefined) {
    throw new RunledgerError(
      "invalid_argument",
      `${where} is { root: <64 hex> } or { sequence: <a whole number >= 1> }; got nothing`,
    );
  }
  return point;
}

/** The entry at `segments` below the directory node `top`, or undefined. */
async function resolveFrom(
  loader: NodeLoader,
  top: DirectoryNode,
  segments: readonly string[],
): Promise<Item | undefined> {
  let entry: Item = { name: "", kind: "directory", target: top.id, size: 0, node: top };
  for (const segment of segments) {
    if (entry.kind !== "directory") return undefined;
    const found = await lookup(loader, await loader.directory(entry), segment);
    if (found === undefined) return undefined;
    entry = found;
  }
  return entry;
}

/** The file a path resolved to, or the error of a path that is no file. */
function fileItem(entry: Item | undefined, path: string): Item {
  if (entry === undefined) throw notFound(path);
  if (entry.kind !== "file") {
    throw new RunledgerError("not_a_file", `${path} is a directory; use list or walk`);
  }
  return entry;
}

async function* walkTree(
  loader: NodeLoader,
  top: DirectoryNode,
  prefix: string,
): AsyncGenerator<WorkspaceFile> {
  for await (const item of entries(loader, top)) {
    if (item.kind === "directory") {
      yield* walkTree(loader, await loader.directory(item), `${prefix}${item.name}/`);
    } else {
      yield describe(item, prefix + item.name) as WorkspaceFile;
    }
  }
}

function describe(item: Item, path: string): WorkspaceEntry {
  if (item.kind !== "file") return { name: item.name, path, kind: "directory" };
  return { name: item.name, path, kind: "file", size: item.size, digest: toHex(item.target) };
}

export interface ApplyChanges {
  readonly put?: Readonly<Record<string, Content>>;
  readonly delete?: readonly string[];
  /** Entries taken by reference from a root, by target path (sources.ts). */
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

export interface ApplyResult {
  readonly rootId: string;
  readonly sequence: number;
}

/**
 * Workspace changes, published atomically: new content is stored, the
 * changed directories rewritten, one new root recorded, the current-root
 * pointer moved and a journal event appended naming it — all in the caller's
 * transaction, inside a savepoint so that a failure anywhere leaves the
 * previous root current and no row behind.
 */
export class WorkspaceWriter extends WorkspaceReader {
  readonly #scope: WriteScope;
  readonly #context: InjectedContext;
  readonly #journal: RootJournal;

  /** `journal`: the run's journal, which publishes each new root (see publish.ts). */
  constructor(
    scope: WriteScope,
    context: InjectedContext,
    workspace: WorkspaceContext,
    journal: RootJournal,
  ) {
    super(scope, workspace);
    this.#scope = scope;
    this.#context = context;
    this.#journal = journal;
  }

  apply(changes: ApplyChanges, options: ApplyOptions = {}): Promise<ApplyResult> {
    return this.#scope.track(this.#apply(changes, options));
  }

  async #apply(changes: ApplyChanges, options: ApplyOptions): Promise<ApplyResult> {
    checkNames(changes, ["put", "delete", "copy"], "apply's changes");
    checkNames(options, ["event", "expect", "missing", "key"], "apply's options");
    const { key } = options;
    if (key !== undefined) this.#journal.checkKey(key);
    const missing = options.missing ?? "error";
    if (missing !== "error" && missing !== "ignore") {
      throw new RunledgerError("invalid_argument", 'apply\'s missing is "error" or "ignore"');
    }
    const puts = Object.entries(changes.put ?? {}).map(([path, content]) => ({
      segments: parsePath(path),
      content,
    }));
    const deletes = (changes.delete ?? []).map((path) => parsePath(path));
    const copies = planCopies(changes.copy);
    const expectations = planExpectations(options.expect);
    // Conflicts are found before anything is written (a copy counts as a
    // directory here; one that turns out a file is checked again below).
    planEdits(
      puts.map(({ segments }) => [segments, PLACEHOLDER] as const),
      deletes,
      copies.map(({ target }) => [target, COPY_PLACEHOLDER] as const),
    );
    const event = this.#journal.text(
      options.event ?? {
        kind: "workspace.apply",
        put: puts.map(({ segments }) => segments.join("/")),
        delete: deletes.map((segments) => segments.join("/")),
        ...(copies.length === 0 ? {} : { copy: copies.map(({ target }) => target.join("/")) }),
      },
    );
    const { hash } = this.workspace;
    return this.#scope.savepoint(async (tx) => {
      const files: ObjectRow[] = [];
      const stored: [string[], Item][] = [];
      for (const { segments, content } of puts) {
        const { digest, size, content: inline } = await storeFile(tx, content, hash, files);
        const name = segments.at(-1)!;
        stored.push([
          segments,
          inline === undefined
            ? { name, kind: "file", target: digest, size }
            : { name, kind: "file", target: digest, size, content: inline },
        ]);
      }
      // Without copies the plan does not depend on the root built on.
      const plan = copies.length === 0 ? planEdits(stored, deletes) : undefined;
      // The roots copies name by `at` are the same whatever the apply builds on.
      const sourceTops = await Promise.all(
        copies.map(({ at }) =>
          at === undefined
            ? undefined
            : sourceRoot(tx, new NodeLoader(tx, this.workspace.nodes), at),
        ),
      );
      const journal = this.#journal.at(tx);
      /** The new top, built from `root` with the nodes `loader` has at hand. */
      const build = async (loader: NodeLoader, root: DirectoryNode): Promise<BuiltRoot> => {
        // Awaited only when the tree work had to read a node (see node-work.ts).
        const checked = checkExpectations(loader, root, expectations);
        if (checked instanceof Promise) await checked;
        const planned = applyPlan(
          loader,
          hash,
          root,
          plan ?? (await copyPlan(loader, root)),
          [],
          missing,
        );
        const top = (planned instanceof Promise ? await planned : planned)!;
        return { loader, top, rootNode: heldTop(loader, top) };
      };
      /** The plan with each copy's entry, read in its source root: `at`'s, or the one built on. */
      const copyPlan = async (loader: NodeLoader, root: DirectoryNode) => {
        const copied: [string[], Item][] = [];
        for (const [i, { target, from }] of copies.entries()) {
          const top = sourceTops[i] ?? root;
          copied.push([target, await sourceEntry(loader, hash, top, from, target.at(-1)!)]);
        }
        return planEdits(stored, deletes, copied);
      };
      // From the lease's guess of the current root, when it has one and its
      // root is at hand (a root evicted, or undone by a rollback, is not read:
      // the head is one read and holds a small root). A guess is never
      // trusted: when it is stale, building on it may fail (its nodes gone) or
      // publishing refuses it (nothing is written); either way the apply
      // starts again from the current root read under the write lock.
      const guess = journal.guess();
      const guessed = new NodeLoader(tx, this.workspace.nodes);
      const guessedRoot = guess === undefined ? undefined : guessed.known(guess.root);
      if (guess !== undefined && guessedRoot !== undefined) {
        const built = await build(guessed, guessedRoot).catch((error: unknown) => {
          if (isRunledgerError(error) && STALE_GUESS.has(error.code)) return undefined;
          throw error;
        });
        const published =
          built && (await journal.publish(event, guess, built.top.id, built.rootNode, key));
        if (built !== undefined && published !== undefined) {
          return this.#store(tx, files, built, published);
        }
      }
      const head = await journal.head();
      const loader = new NodeLoader(tx, this.workspace.nodes);
      const built = await build(loader, await loader.root(head.root, head.rootNode));
      const published = await journal.publish(event, head, built.top.id, built.rootNode, key);
      if (published === undefined) {
        throw new RunledgerError(
          "corrupt",
          "the journal refused a new root computed under the write lock; run verify",
        );
      }
      return this.#store(tx, files, built, published);
    });
  }

  /**
   * Writes the apply's new objects — its files' and the nodes its root
   * reaches, but a root its event holds — and keeps those nodes.
   */
  async #store(
    tx: WriteScope,
    files: ObjectRow[],
    built: BuiltRoot,
    published: { rootId: string; sequence: number },
  ): Promise<ApplyResult> {
    const nodes = builtBelow(built.loader, built.top);
    const held = built.rootNode !== undefined;
    const rows = nodeRows(held ? nodes.filter((node) => node !== built.top) : nodes);
    await insertObjects(tx, [...files, ...rows]);
    this.workspace.nodes.replace(nodes);
    return { rootId: published.rootId, sequence: published.sequence };
  }

  /** Keeps a root (default: the current one) from garbage collection under a name. */
  pin(name: string, options: AtRoot = {}): Promise<void> {
    return this.#scope.track(this.#pin(name, options));
  }

  async #pin(name: string, options: AtRoot): Promise<void> {
    checkNames(options, AT_ROOT, "pin's options");
    if (typeof name !== "string" || name.length < 1 || name.length > 256) {
      throw new RunledgerError("invalid_argument", "a pin name is a string of 1 to 256 characters");
    }
    const top = await this.rootNode(this.loader(), options.root);
    const root = top.id;
    // A pinned root outlives the events that name it (prune): it is a row of its own.
    const bytes = top.bytes ?? nodeBytes(top.level, top.items).bytes;
    if (bytes.length <= INLINE_NODE_MAX) {
      await insertObjects(this.executor, [
        { id: root, kind: BYTES, size: bytes.length, data: bytes },
      ]);
    }
    await this.executor.execute(
      `INSERT INTO workspace_pin (name, root_id, created_at) VALUES (?, ?, ?)
ON CONFLICT (name) DO UPDATE SET root_id = excluded.root_id`,
      [name, root, this.#context.clock()],
    );
  }

  /** Drops journal events before `before`; run `collectGarbage` afterwards to free what they retained. */
  prune(options: { before: number }): Promise<number> {
    return this.#scope.track(this.#prune(options));
  }

  async #prune(options: { before: number }): Promise<number> {
    checkNames(options, ["before"], "prune's options");
    return pruneJournal(this.executor, options.before);
  }

  /** Deletes every node, file and piece that no event, pin or the current root reaches. */
  collectGarbage(): Promise<GarbageReport> {
    return this.#scope.track(collectGarbage(this.executor, this.workspace.nodes));
  }

  unpin(name: string): Promise<boolean> {
    return this.#scope.track(
      this.executor
        .execute("DELETE FROM workspace_pin WHERE name = ?", [name])
        .then(({ changes }) => changes > 0),
    );
  }
}

/** The current root's id: the newest event's root, or the empty root before the first. */
export async function currentRootId(executor: Executor): Promise<Uint8Array> {
  return checkedRootId((await readHead(executor)).root);
}

function checkedRootId(id: unknown): Uint8Array {
  if (!(id instanceof Uint8Array)) {
    throw new RunledgerError("corrupt", "the run has no current workspace root; run verify");
  }
  return id;
}

/** What an apply built: its new top, the loader holding the nodes built for it, and the top's bytes when its event holds them. */
interface BuiltRoot {
  readonly loader: NodeLoader;
  readonly top: DirectoryNode;
  readonly rootNode: Uint8Array | undefined;
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

export function parseRootId(root: string): Uint8Array {
  if (typeof root !== "string" || !/^[0-9a-f]{64}$/.test(root)) {
    throw new RunledgerError(
      "invalid_argument",
      `a root id is 64 lower-case hex characters; got ${JSON.stringify(root)}`,
    );
  }
  return fromHex(root);
}

function notFound(path: string): RunledgerError {
  return new RunledgerError("path_not_found", `nothing at ${JSON.stringify(path)} in this root`, {
    details: { path },
  });
}
