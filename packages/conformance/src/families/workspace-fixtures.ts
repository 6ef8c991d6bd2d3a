/**
 * Helpers shared by the workspace families (spec §6, §7): run stores closed
 * when their test ends, raw reads of the run database's tables through a
 * read scope, and reference computations written here from the documented
 * file format (docs/file-format.md), not from core's code — SHA-256 comes
 * from node:crypto, names are ordered with Buffer.compare — so that core's
 * answers are checked against an independent implementation.
 */
import { createHash } from "node:crypto";
import type { ApplyChanges, Driver, JsonObject, RunLease, RunStore } from "@runledger/core";
import { expect } from "vitest";
import type { Fixtures } from "../fixtures.js";
import { runStore } from "./run-fixtures.js";

/** Every table of the run database that the workspace writes. */
export const WORKSPACE_TABLES = [
  "workspace_blob",
  "workspace_chunk",
  "workspace_blob_chunk",
  "workspace_tree",
  "workspace_tree_entry",
  "workspace_root",
  "workspace_current",
  "workspace_pin",
] as const;

/** The workspace tables, the journal and the run row: everything an apply could touch. */
export const RUN_TABLES = [...WORKSPACE_TABLES, "journal", "run"] as const;

/** The documented canonical empty root and its tree (docs/file-format.md). */
export const DOCUMENTED_EMPTY_ROOT =
  "24812dcc6b9d4a05f9552c64862d10ac5f027ad1dc03f8e9993bfc36f49d422d";
export const DOCUMENTED_EMPTY_TREE =
  "3b31997094fecf2a78dcc3f9dff7da43d499e5228bb5562a255dd4ef99e8b90b";

const encoder = new TextEncoder();
export const utf8 = (text: string): Uint8Array => encoder.encode(text);

export function sha256Hex(data: Uint8Array | string): string {
  return createHash("sha256")
    .update(typeof data === "string" ? utf8(data) : data)
    .digest("hex");
}

let runs = 0;

export interface NewRun {
  readonly store: RunStore;
  readonly location: string;
  readonly lease: RunLease;
}

/** A fresh run at a fresh location, on a store closed when the current test ends. */
export async function newRun(
  fx: Fixtures,
  options: { driver?: Driver; store?: RunStore } = {},
): Promise<NewRun> {
  const store =
    options.store ?? runStore(fx, options.driver === undefined ? {} : { driver: options.driver });
  const location = fx.location();
  const n = ++runs;
  const lease = await store.open(location, {
    create: { workflowId: "conformance-workspace", runId: `run-${n}` },
  });
  return { store, location, lease };
}

/** One apply in its own transaction. */
export function apply(
  lease: RunLease,
  changes: ApplyChanges,
  options: { event?: JsonObject } = {},
): Promise<{ rootId: string; sequence: number }> {
  return lease.transact((tx) => tx.workspace.apply(changes, options));
}

/** Rows of one query, run in a read scope of the run's own connection. */
export function query(
  lease: RunLease,
  sql: string,
  params: readonly (string | number | Uint8Array | null)[] = [],
): Promise<Record<string, unknown>[]> {
  return lease.lease.read(async (reader) => (await reader.execute(sql, params)).rows);
}

export async function count(lease: RunLease, table: string): Promise<number> {
  const rows = await query(lease, `SELECT count(*) AS n FROM ${table}`);
  return Number(rows[0]!.n);
}

export async function rowCounts<T extends string = (typeof WORKSPACE_TABLES)[number]>(
  lease: RunLease,
  tables: readonly T[] = WORKSPACE_TABLES as readonly string[] as readonly T[],
): Promise<Record<T, number>> {
  const counts = {} as Record<T, number>;
  for (const table of tables) counts[table] = await count(lease, table);
  return counts;
}

const hex = (bytes: Uint8Array) => Buffer.from(bytes).toString("hex");

function render(value: unknown): string {
  if (value instanceof Uint8Array) {
    // Chunk data: its length and digest stand for it.
    return value.length > 64 ? `bytes(${value.length}):${sha256Hex(value)}` : `x'${hex(value)}'`;
  }
  return JSON.stringify(typeof value === "bigint" ? String(value) : value);
}

/**
 * Every row of every table an apply could touch, each rendered as one string,
 * sorted: two dumps are equal exactly when no row was added, removed or
 * changed.
 */
export async function dumpTables(lease: RunLease): Promise<Record<string, string[]>> {
  return lease.lease.read(async (reader) => {
    const dump: Record<string, string[]> = {};
    for (const table of RUN_TABLES) {
      const { rows } = await reader.execute(`SELECT * FROM ${table}`);
      dump[table] = rows
        .map((row) =>
          Object.entries(row)
            .map(([column, value]) => `${column}=${render(value)}`)
            .join(" "),
        )
        .sort();
    }
    return dump;
  });
}

/** Runs `action`, which must be refused with `code`, and checks that no row anywhere changed. */
export async function expectRefusedUnchanged(
  lease: RunLease,
  code: string,
  action: () => Promise<unknown>,
): Promise<void> {
  const before = await dumpTables(lease);
  const currentBefore = await lease.read((r) => r.workspace.currentRoot());
  let failure: unknown;
  try {
    await action();
  } catch (error) {
    failure = error;
  }
  expect(failure, `expected a refusal with ${code}`).toBeDefined();
  expect((failure as { code?: unknown }).code, String(failure)).toBe(code);
  expect(await lease.read((r) => r.workspace.currentRoot())).toBe(currentBefore);
  expect(await dumpTables(lease)).toStrictEqual(before);
}

// ---------------------------------------------------------------------------
// Workspace structure as stored: read straight from the tables.

export interface StoredTables {
  /** root id → tree id */
  readonly roots: Map<string, string>;
  readonly current: string;
  readonly journalRoots: Set<string>;
  readonly pinRoots: Set<string>;
  readonly trees: Set<string>;
  /** tree id → its entries' targets */
  readonly subtrees: Map<string, string[]>;
  readonly treeBlobs: Map<string, string[]>;
  readonly blobs: Set<string>;
  /** blob digest → chunk digests */
  readonly blobChunks: Map<string, string[]>;
  readonly chunks: Set<string>;
}

export interface ObjectSets {
  readonly roots: Set<string>;
  readonly trees: Set<string>;
  readonly blobs: Set<string>;
  readonly chunks: Set<string>;
}

/** Reads the object graph out of the tables (ids as lower-case hex). */
export async function storedTables(lease: RunLease): Promise<StoredTables> {
  const rows = (sql: string) => query(lease, sql);
  const h = (column: string) => `lower(hex(${column})) AS ${column}`;
  const push = (map: Map<string, string[]>, key: string, value: string) => {
    const list = map.get(key);
    if (list === undefined) map.set(key, [value]);
    else list.push(value);
  };
  const roots = new Map<string, string>();
  for (const row of await rows(`SELECT ${h("root_id")}, ${h("tree_id")} FROM workspace_root`)) {
    roots.set(String(row.root_id), String(row.tree_id));
  }
  const current = String((await rows(`SELECT ${h("root_id")} FROM workspace_current`))[0]?.root_id);
  const journalRoots = new Set(
    (await rows(`SELECT ${h("root_id")} FROM journal`)).map((row) => String(row.root_id)),
  );
  const pinRoots = new Set(
    (await rows(`SELECT ${h("root_id")} FROM workspace_pin`)).map((row) => String(row.root_id)),
  );
  const trees = new Set(
    (await rows(`SELECT ${h("tree_id")} FROM workspace_tree`)).map((row) => String(row.tree_id)),
  );
  const subtrees = new Map<string, string[]>();
  const treeBlobs = new Map<string, string[]>();
  for (const row of await rows(
    `SELECT ${h("tree_id")}, kind, ${h("blob_digest")}, ${h("subtree_id")} FROM workspace_tree_entry`,
  )) {
    if (row.kind === "file") push(treeBlobs, String(row.tree_id), String(row.blob_digest));
    else push(subtrees, String(row.tree_id), String(row.subtree_id));
  }
  const blobs = new Set(
    (await rows(`SELECT ${h("digest")} FROM workspace_blob`)).map((row) => String(row.digest)),
  );
  const blobChunks = new Map<string, string[]>();
  for (const row of await rows(
    `SELECT ${h("digest")}, ${h("chunk_digest")} FROM workspace_blob_chunk ORDER BY digest, ordinal`,
  )) {
    push(blobChunks, String(row.digest), String(row.chunk_digest));
  }
  const chunks = new Set(
    (await rows(`SELECT ${h("chunk_digest")} FROM workspace_chunk`)).map((row) =>
      String(row.chunk_digest),
    ),
  );
  return {
    roots,
    current,
    journalRoots,
    pinRoots,
    trees,
    subtrees,
    treeBlobs,
    blobs,
    blobChunks,
    chunks,
  };
}

/** What the documented retention rule keeps, starting from the given roots. */
export function reachableFrom(tables: StoredTables, retainedRoots: Iterable<string>): ObjectSets {
  const roots = new Set<string>();
  const trees = new Set<string>();
  const blobs = new Set<string>();
  const chunks = new Set<string>();
  const pending: string[] = [];
  for (const root of retainedRoots) {
    const tree = tables.roots.get(root);
    if (tree === undefined) continue;
    roots.add(root);
    pending.push(tree);
  }
  while (pending.length > 0) {
    const tree = pending.pop()!;
    if (trees.has(tree)) continue;
    trees.add(tree);
    pending.push(...(tables.subtrees.get(tree) ?? []));
    for (const blob of tables.treeBlobs.get(tree) ?? []) blobs.add(blob);
  }
  for (const blob of blobs)
    for (const chunk of tables.blobChunks.get(blob) ?? []) chunks.add(chunk);
  return { roots, trees, blobs, chunks };
}

/** Roots retained by the pointer, the journal and the pins. */
export function retainedRoots(tables: StoredTables): Set<string> {
  return new Set([tables.current, ...tables.journalRoots, ...tables.pinRoots]);
}

export function allObjects(tables: StoredTables): ObjectSets {
  return {
    roots: new Set(tables.roots.keys()),
    trees: new Set(tables.trees),
    blobs: new Set(tables.blobs),
    chunks: new Set(tables.chunks),
  };
}

export const sorted = (set: Iterable<string>): string[] => [...set].sort();

export function minus(a: Set<string>, b: Set<string>): Set<string> {
  return new Set([...a].filter((x) => !b.has(x)));
}

// ---------------------------------------------------------------------------
// The workspace as a model: path → bytes.

export type Model = Map<string, Uint8Array>;

/** Compares names by their UTF-8 bytes. */
export function compareNames(a: string, b: string): number {
  return Buffer.compare(Buffer.from(a, "utf8"), Buffer.from(b, "utf8"));
}

/** Depth-first, in name order: what `walk` promises. */
export function comparePaths(a: string, b: string): number {
  const x = a.split("/");
  const y = b.split("/");
  for (let i = 0; i < Math.min(x.length, y.length); i++) {
    const order = compareNames(x[i]!, y[i]!);
    if (order !== 0) return order;
  }
  return x.length - y.length;
}

interface Directory {
  readonly files: Map<string, Uint8Array>;
  readonly directories: Map<string, Directory>;
}

function directoryOf(model: Model): Directory {
  const top: Directory = { files: new Map(), directories: new Map() };
  for (const [path, bytes] of model) {
    const segments = path.split("/");
    let directory = top;
    for (const segment of segments.slice(0, -1)) {
      let next = directory.directories.get(segment);
      if (next === undefined) {
        next = { files: new Map(), directories: new Map() };
        directory.directories.set(segment, next);
      }
      directory = next;
    }
    directory.files.set(segments[segments.length - 1]!, bytes);
  }
  return top;
}

const TREE_DOMAIN = Buffer.from("runledger/workspace/tree/1\u0000", "utf8");
const ROOT_DOMAIN = Buffer.from("runledger/workspace/root/1\u0000", "utf8");

function referenceTreeId(directory: Directory): Buffer {
  const entries: [name: string, kind: number, target: Buffer][] = [];
  for (const [name, bytes] of directory.files) {
    entries.push([name, 1, createHash("sha256").update(bytes).digest()]);
  }
  for (const [name, sub] of directory.directories) entries.push([name, 2, referenceTreeId(sub)]);
  entries.sort((a, b) => compareNames(a[0], b[0]));
  const hash = createHash("sha256").update(TREE_DOMAIN);
  for (const [name, kind, target] of entries) {
    const nameBytes = Buffer.from(name, "utf8");
    const header = Buffer.alloc(5);
    header[0] = kind;
    header.writeUInt32BE(nameBytes.length, 1);
    hash.update(header).update(nameBytes).update(target);
  }
  return hash.digest();
}

/** The root id format 1 gives the model, computed from the documented encoding. */
export function referenceRootId(model: Model): string {
  const tree = referenceTreeId(directoryOf(model));
  return createHash("sha256").update(ROOT_DOMAIN).update(tree).digest("hex");
}

/** The tree id format 1 gives one directory of the model ("" for the top). */
export function referenceDirectoryTreeId(model: Model, directory: string): string {
  let node = directoryOf(model);
  for (const segment of directory === "" ? [] : directory.split("/")) {
    const next = node.directories.get(segment);
    if (next === undefined) throw new Error(`the model has no directory ${directory}`);
    node = next;
  }
  return referenceTreeId(node).toString("hex");
}

/** The directories the model implies ("" is the top). */
export function modelDirectories(model: Model): string[] {
  const directories = new Set<string>([""]);
  for (const path of model.keys()) {
    const segments = path.split("/");
    for (let i = 1; i < segments.length; i++) directories.add(segments.slice(0, i).join("/"));
  }
  return [...directories];
}

/** What `list(directory)` must answer for the model: entries in name order. */
export function modelListing(
  model: Model,
  directory: string,
): { name: string; path: string; kind: string; size?: number; digest?: string }[] {
  const prefix = directory === "" ? "" : `${directory}/`;
  const children = new Map<string, { kind: string; size?: number; digest?: string }>();
  for (const [path, bytes] of model) {
    if (!path.startsWith(prefix)) continue;
    const rest = path.slice(prefix.length).split("/");
    if (rest.length === 1) {
      children.set(rest[0]!, { kind: "file", size: bytes.length, digest: sha256Hex(bytes) });
    } else {
      children.set(rest[0]!, { kind: "directory" });
    }
  }
  return [...children.entries()]
    .sort((a, b) => compareNames(a[0], b[0]))
    .map(([name, entry]) => ({ name, path: prefix + name, ...entry }));
}

/**
 * Checks every reader against the model at one root (default: current):
 * walk (order, sizes, digests), read of every file, stat of every file and
 * directory, list of every directory, and the root id itself.
 */
export async function expectWorkspace(lease: RunLease, model: Model, root?: string): Promise<void> {
  const at = root === undefined ? {} : { root };
  const expectedFiles = [...model.keys()].sort(comparePaths).map((path) => ({
    path,
    size: model.get(path)!.length,
    digest: sha256Hex(model.get(path)!),
  }));
  await lease.read(async (r) => {
    expect(root ?? (await r.workspace.currentRoot())).toBe(referenceRootId(model));
    const walked = [];
    for await (const file of r.workspace.walk(undefined, at)) {
      walked.push({ path: file.path, size: file.size, digest: file.digest });
    }
    expect(walked).toStrictEqual(expectedFiles);
    for (const [path, bytes] of model) {
      const read = await r.workspace.read(path, at);
      expect(Buffer.from(read).equals(Buffer.from(bytes)), `read ${path}`).toBe(true);
      const stat = await r.workspace.stat(path, at);
      expect(stat.kind).toBe("file");
      expect(stat.path).toBe(path);
      expect(stat.size).toBe(bytes.length);
      expect(stat.digest).toBe(sha256Hex(bytes));
    }
    for (const directory of modelDirectories(model)) {
      const listing = (await r.workspace.list(directory, at)).map((entry) => ({ ...entry }));
      expect(listing, `list ${JSON.stringify(directory)}`).toStrictEqual(
        modelListing(model, directory),
      );
      if (directory !== "") {
        const stat = await r.workspace.stat(directory, at);
        expect(stat.kind).toBe("directory");
        expect(stat.path).toBe(directory);
      }
    }
  });
}

/** Applies puts and deletes to a model the way the workspace must (no conflicts assumed). */
export function applyToModel(model: Model, puts: Record<string, Uint8Array>, deletes: string[]) {
  const next: Model = new Map(model);
  for (const path of deletes) {
    next.delete(path);
    for (const key of [...next.keys()]) if (key.startsWith(`${path}/`)) next.delete(key);
  }
  for (const [path, bytes] of Object.entries(puts)) next.set(path, bytes);
  return next;
}

/** The error code of a rejected promise (or "ok"). */
export async function codeOf(promise: Promise<unknown>): Promise<string> {
  try {
    await promise;
    return "ok";
  } catch (error) {
    const code = (error as { code?: unknown }).code;
    return typeof code === "string" ? code : `non-runledger error: ${String(error)}`;
  }
}
