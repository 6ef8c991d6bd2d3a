import type { Executor } from "../port/driver.js";
import { RunledgerError } from "../port/errors.js";
import { toHex } from "../port/hash.js";
import { JournalWriter, journalText, type RootHint } from "../run/journal.js";
import type { JsonObject } from "../run/json.js";
import type { RunContext } from "../run/types.js";
import type { WriteScope } from "../transaction/scope.js";
import { blobSize, type Content, readBlob, storeBlob, streamBlob } from "./blobs.js";
import { collectGarbage, type GarbageReport, pruneJournal } from "./gc.js";
import { compareNames, ROOT_FORMAT, rootId, type TreeEntry } from "./identity.js";
import { parseDirectory, parsePath } from "./paths.js";
import { loadEntries, planEdits, resolve, rewrite } from "./trees.js";

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

const CURRENT = `SELECT c.root_id, r.tree_id FROM workspace_current c
JOIN workspace_root r ON r.root_id = c.root_id WHERE c.singleton = 1`;
const ROOT_TREE = "SELECT tree_id FROM workspace_root WHERE root_id = ?";
const HISTORY =
  "SELECT sequence, event_id, root_id FROM journal WHERE sequence > ? ORDER BY sequence LIMIT ?";
const PINS = "SELECT name, root_id FROM workspace_pin ORDER BY name";

/** Snapshot reads of the workspace at the current root or any other. */
export class WorkspaceReader {
  protected readonly executor: Executor;

  constructor(executor: Executor) {
    this.executor = executor;
  }

  /** The current root's id (hex). */
  async currentRoot(): Promise<string> {
    return toHex((await this.rootTree(undefined)).root);
  }

  /** A file's whole content. For large files use `stream`. */
  async read(path: string, options: AtRoot = {}): Promise<Uint8Array> {
    return readBlob(this.executor, await this.#file(path, options));
  }

  /** A file's content one chunk at a time; consume it inside the callback. */
  async *stream(path: string, options: AtRoot = {}): AsyncGenerator<Uint8Array> {
    yield* streamBlob(this.executor, await this.#file(path, options));
  }

  async stat(path: string, options: AtRoot = {}): Promise<WorkspaceEntry> {
    const segments = parsePath(path);
    const entry = await resolve(this.executor, await this.#tree(options), segments);
    if (entry === undefined) throw notFound(path);
    return this.#describe(entry, segments.join("/"));
  }

  /** The entries of a directory ("" or omitted: the top), in name order. */
  async list(directory?: string, options: AtRoot = {}): Promise<WorkspaceEntry[]> {
    const segments = parseDirectory(directory);
    const entry = await resolve(this.executor, await this.#tree(options), segments);
    if (entry === undefined) throw notFound(directory ?? "");
    if (entry.kind !== "directory") {
      throw new RunledgerError("not_a_directory", `${directory} is a file; use read or stat`);
    }
    const entries = sortByName(await loadEntries(this.executor, entry.target));
    const prefix = segments.length === 0 ? "" : `${segments.join("/")}/`;
    return Promise.all(entries.map((child) => this.#describe(child, prefix + child.name)));
  }

  /** Every file below a directory, depth first in name order. */
  async *walk(directory?: string, options: AtRoot = {}): AsyncGenerator<WorkspaceFile> {
    const segments = parseDirectory(directory);
    const start = await resolve(this.executor, await this.#tree(options), segments);
    if (start === undefined) throw notFound(directory ?? "");
    if (start.kind === "file") {
      yield (await this.#describe(start, segments.join("/"))) as WorkspaceFile;
      return;
    }
    yield* this.#walkTree(start.target, segments.length === 0 ? "" : `${segments.join("/")}/`);
  }

  /** The roots in journal order: each event whose root differs from the one before it. */
  async *history(): AsyncGenerator<HistoryEntry> {
    let after = 0;
    let previous: string | undefined;
    for (;;) {
      const { rows } = await this.executor.execute(HISTORY, [after, 500]);
      for (const row of rows) {
        const id = toHex(row.root_id as Uint8Array);
        if (id !== previous) {
          yield { sequence: Number(row.sequence), eventId: String(row.event_id), rootId: id };
          previous = id;
        }
      }
      if (rows.length < 500) return;
      after = Number(rows[rows.length - 1]!.sequence);
    }
  }

  /** Named pins that keep roots from garbage collection. */
  async pins(): Promise<{ name: string; rootId: string }[]> {
    const { rows } = await this.executor.execute(PINS);
    return rows.map((row) => ({
      name: String(row.name),
      rootId: toHex(row.root_id as Uint8Array),
    }));
  }

  async *#walkTree(tree: Uint8Array, prefix: string): AsyncGenerator<WorkspaceFile> {
    for (const entry of sortByName(await loadEntries(this.executor, tree))) {
      if (entry.kind === "directory")
        yield* this.#walkTree(entry.target, `${prefix}${entry.name}/`);
      else yield (await this.#describe(entry, prefix + entry.name)) as WorkspaceFile;
    }
  }

  async #describe(entry: TreeEntry, path: string): Promise<WorkspaceEntry> {
    if (entry.kind === "directory") return { name: entry.name || "", path, kind: "directory" };
    const { size } = await blobSize(this.executor, entry.target);
    return { name: entry.name, path, kind: "file", size, digest: toHex(entry.target) };
  }

  async #file(path: string, options: AtRoot): Promise<Uint8Array> {
    const entry = await resolve(this.executor, await this.#tree(options), parsePath(path));
    if (entry === undefined) throw notFound(path);
    if (entry.kind !== "file") {
      throw new RunledgerError("not_a_file", `${path} is a directory; use list or walk`);
    }
    return entry.target;
  }

  protected rootTree(root: string | undefined): Promise<{ root: Uint8Array; tree: Uint8Array }> {
    return rootTree(this.executor, root);
  }

  async #tree(options: AtRoot): Promise<Uint8Array> {
    return (await this.rootTree(options.root)).tree;
  }
}

export interface ApplyChanges {
  readonly put?: Readonly<Record<string, Content>>;
  readonly delete?: readonly string[];
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
  readonly #context: RunContext;
  readonly #hint: RootHint;

  constructor(scope: WriteScope, context: RunContext, hint: RootHint = { root: undefined }) {
    super(scope);
    this.#scope = scope;
    this.#context = context;
    this.#hint = hint;
  }

  async apply(changes: ApplyChanges, options: { event?: JsonObject } = {}): Promise<ApplyResult> {
    const puts = Object.entries(changes.put ?? {}).map(([path, content]) => ({
      segments: parsePath(path),
      content,
    }));
    const deletes = (changes.delete ?? []).map((path) => parsePath(path));
    // Conflicts are found before anything is written.
    planEdits(
      puts.map(({ segments }) => [segments, new Uint8Array(32)] as const),
      deletes,
    );
    const event = journalText(
      options.event ?? {
        kind: "workspace.apply",
        put: puts.map(({ segments }) => segments.join("/")),
        delete: deletes.map((segments) => segments.join("/")),
      },
    );
    return this.#scope.savepoint(async (tx) => {
      const stored: [string[], Uint8Array][] = [];
      for (const { segments, content } of puts) {
        stored.push([segments, (await storeBlob(tx, content)).digest]);
      }
      const { tree } = await rootTree(tx, undefined);
      const newTree = (await rewrite(tx, tree, planEdits(stored, deletes)))!;
      const newRoot = rootId(newTree);
      await tx.execute(
        `INSERT INTO workspace_root (root_id, format, tree_id, created_at) VALUES (?, ?, ?, ?)
ON CONFLICT DO NOTHING`,
        [newRoot, ROOT_FORMAT, newTree, this.#context.clock()],
      );
      await tx.execute("UPDATE workspace_current SET root_id = ? WHERE singleton = 1", [newRoot]);
      const appended = await new JournalWriter(tx, this.#context, this.#hint).appendAtRoot(
        event,
        newRoot,
      );
      return { rootId: toHex(newRoot), sequence: appended.sequence };
    });
  }

  /** Keeps a root (default: the current one) from garbage collection under a name. */
  async pin(name: string, options: AtRoot = {}): Promise<void> {
    if (typeof name !== "string" || name.length < 1 || name.length > 256) {
      throw new RunledgerError("invalid_argument", "a pin name is a string of 1 to 256 characters");
    }
    const { root } = await this.rootTree(options.root);
    await this.executor.execute(
      `INSERT INTO workspace_pin (name, root_id, created_at) VALUES (?, ?, ?)
ON CONFLICT (name) DO UPDATE SET root_id = excluded.root_id`,
      [name, root, this.#context.clock()],
    );
  }

  /** Drops journal events before `before`; run `collectGarbage` afterwards to free what they retained. */
  prune(options: { before: number }): Promise<number> {
    return pruneJournal(this.executor, options.before);
  }

  /** Deletes every root, tree, blob and chunk that no pointer, event or pin retains. */
  collectGarbage(): Promise<GarbageReport> {
    return collectGarbage(this.executor);
  }

  async unpin(name: string): Promise<boolean> {
    return (
      (await this.executor.execute("DELETE FROM workspace_pin WHERE name = ?", [name])).changes > 0
    );
  }
}

/** A root (default: the current one) and its tree, or `root_not_found`. */
export async function rootTree(
  executor: Executor,
  root: string | undefined,
): Promise<{ root: Uint8Array; tree: Uint8Array }> {
  if (root === undefined) {
    const row = (await executor.execute(CURRENT)).rows[0];
    if (row === undefined)
      throw new RunledgerError("corrupt", "the run has no current workspace root");
    return { root: row.root_id as Uint8Array, tree: row.tree_id as Uint8Array };
  }
  const bytes = parseRootId(root);
  const row = (await executor.execute(ROOT_TREE, [bytes])).rows[0];
  if (row === undefined) {
    throw new RunledgerError("root_not_found", `no workspace root ${root} in this run`, {
      details: { root },
    });
  }
  return { root: bytes, tree: row.tree_id as Uint8Array };
}

export function parseRootId(root: string): Uint8Array {
  if (typeof root !== "string" || !/^[0-9a-f]{64}$/.test(root)) {
    throw new RunledgerError(
      "invalid_argument",
      `a root id is 64 lower-case hex characters; got ${JSON.stringify(root)}`,
    );
  }
  const bytes = new Uint8Array(32);
  for (let i = 0; i < 32; i++) bytes[i] = Number.parseInt(root.slice(i * 2, i * 2 + 2), 16);
  return bytes;
}

function sortByName(entries: TreeEntry[]): TreeEntry[] {
  return entries.sort((a, b) => compareNames(a.name, b.name));
}

function notFound(path: string): RunledgerError {
  return new RunledgerError("path_not_found", `nothing at ${JSON.stringify(path)} in this root`, {
    details: { path },
  });
}
