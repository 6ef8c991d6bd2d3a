/**
 * The workspace a run snapshot reads: files, directories, walks and diffs
 * at the current root or any root the run retains, its history and its pins.
 * (A transaction's workspace writes too: writer.ts.)
 */
import { fromHex, toHex } from "../port/bytes.js";
import type { Executor } from "../port/driver.js";
import { RunledgerError } from "../port/errors.js";
import { keysetRows } from "../port/keyset.js";
import { checkNames } from "../port/options.js";
import type { CallbackScope } from "../transaction/scope.js";
import type { WorkspaceContext } from "./context.js";
import { diffTrees, type WorkspaceChange } from "./diff.js";
import { readFile, readFiles, streamFile } from "./files.js";
import type { DirectoryNode, Item } from "./node.js";
import { NodeLoader } from "./node-loader.js";
import { parseDirectory, parsePath } from "./paths.js";
import { listPins } from "./pins.js";
import type { HistoryEntry, JournalRoots } from "./root-journal.js";
import { type RootPoint, rootAt, rootPoint } from "./sources.js";
import { entries, lookup } from "./trees.js";

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

/** The one option a read at a root takes. */
export const AT_ROOT = ["root"];

/**
 * Snapshot reads of the workspace at the current root or any other. Each
 * call that answers a promise belongs to the snapshot or transaction that
 * handed out this reader: its callback must await it. Streams are read by
 * the callback as it goes.
 */
export class WorkspaceReader {
  /** @internal */
  protected readonly executor: CallbackScope;
  /** @internal */
  protected readonly workspace: WorkspaceContext;

  /** @internal A run snapshot or transaction makes its workspace reader. */
  constructor(scope: CallbackScope, workspace: WorkspaceContext) {
    this.executor = scope;
    this.workspace = workspace;
  }

  /** The current root's id (hex). */
  currentRoot(): Promise<string> {
    return this.executor.track(this.#currentRoot());
  }

  async #currentRoot(): Promise<string> {
    return toHex(await currentRootId(this.executor, this.workspace.journal));
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
      await rootAt(this.executor, this.workspace.journal, loader, sides[0]!),
      await rootAt(this.executor, this.workspace.journal, loader, sides[1]!),
    ];
    yield* diffTrees(loader, a, b);
  }

  /** The roots in journal order: each event whose root differs from the one before it. */
  async *history(): AsyncGenerator<HistoryEntry> {
    let previous: string | undefined;
    const events = keysetRows({
      start: 0,
      page: (after, limit) => this.workspace.journal.events(this.executor, after, limit),
      keyOf: (event) => event.sequence,
      limit: 500,
    });
    for await (const event of events) {
      if (event.rootId !== previous) {
        yield event;
        previous = event.rootId;
      }
    }
  }

  /** Named pins that keep roots from garbage collection. */
  pins(): Promise<{ name: string; rootId: string }[]> {
    return this.executor.track(listPins(this.executor));
  }

  /** @internal A loader reading with `executor` (default this scope's), through the store's node cache. */
  protected loader(executor: Executor = this.executor): NodeLoader {
    return new NodeLoader(executor, this.workspace.nodes, this.workspace.journal);
  }

  /** @internal A root (default: the current one) as a node, or `root_not_found`. */
  protected async rootNode(loader: NodeLoader, root: string | undefined): Promise<DirectoryNode> {
    if (root === undefined) {
      const head = await this.workspace.journal.head(this.executor);
      return loader.root(checkedRootId(head.root), { held: head.rootBytes });
    }
    return loader.root(parseRootId(root), { named: root });
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

/** The current root's id: the newest event's root, or the empty root before the first. */
export async function currentRootId(
  executor: Executor,
  journal: JournalRoots,
): Promise<Uint8Array> {
  return checkedRootId((await journal.head(executor)).root);
}

function checkedRootId(id: unknown): Uint8Array {
  if (!(id instanceof Uint8Array)) {
    throw new RunledgerError("corrupt", "the run has no current workspace root; run verify");
  }
  return id;
}

/** A root id a caller gave (64 lower-case hex), as bytes; `invalid_argument` otherwise. */
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
