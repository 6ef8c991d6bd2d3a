/**
 * Helpers shared by the workspace families (docs/file-format.md): run stores closed
 * when their test ends, raw reads of the run database's tables through a
 * read scope, and reference computations written here from the documented
 * file format (docs/file-format.md), not from core's code — SHA-256 comes
 * from node:crypto, names are ordered with Buffer.compare — so that core's
 * answers are checked against an independent implementation.
 */
import type { ApplyChanges, ApplyOptions, RunLease, RunStore } from "@runledger/core";
import type { Driver } from "@runledger/core/port";
import { expect } from "vitest";
import { codeOf, type Fixtures, sha256Hex } from "../fixtures.js";
import { runStore } from "./run-fixtures.js";

/** Every table of the run database that the workspace writes. */
export const WORKSPACE_TABLES = [
  "workspace_object",
  "workspace_chunk",
  "workspace_current",
  "workspace_pin",
] as const;

/** The workspace tables, the journal and the run row: everything an apply could touch. */
export const RUN_TABLES = [...WORKSPACE_TABLES, "journal", "run"] as const;

/** The documented canonical empty root (docs/file-format.md). */
export const DOCUMENTED_EMPTY_ROOT =
  "b675551457eebdbe909baf072723d7274a1b052cffce27abd668f1c9febaa712";

const encoder = new TextEncoder();
export const utf8 = (text: string): Uint8Array => encoder.encode(text);

// Defined once with the other shared probes (fixtures.ts); the workspace families import them here.
export { codeOf, sha256Hex };

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
  options: ApplyOptions = {},
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

export interface StoredObject {
  readonly kind: number;
  readonly size: number;
  /** 0 for a whole row; a delta's depth (its chain's length) otherwise. */
  readonly depth: number;
  readonly data: Buffer;
}

export interface StoredTables {
  /** id → the object as stored */
  readonly objects: Map<string, StoredObject>;
  readonly current: string;
  readonly journalRoots: Set<string>;
  /** Roots the journal's events hold (`root_node`): id → the node's bytes. */
  readonly heldRoots: Map<string, Buffer>;
  readonly pinRoots: Set<string>;
  readonly chunks: Set<string>;
}

/** Objects by what they are, as GarbageReport counts them. */
export interface ObjectSets {
  readonly nodes: Set<string>;
  readonly files: Set<string>;
  readonly chunks: Set<string>;
}

/** Reads the object graph out of the tables (ids as lower-case hex). */
export async function storedTables(lease: RunLease): Promise<StoredTables> {
  const rows = (sql: string) => query(lease, sql);
  const h = (column: string) => `lower(hex(${column})) AS ${column}`;
  const objects = new Map<string, StoredObject>();
  for (const row of await rows(
    `SELECT ${h("id")}, kind, size, depth, data FROM workspace_object`,
  )) {
    objects.set(String(row.id), {
      kind: Number(row.kind),
      size: Number(row.size),
      depth: Number(row.depth),
      data: Buffer.from(row.data as Uint8Array),
    });
  }
  const current = String((await rows(`SELECT ${h("root_id")} FROM workspace_current`))[0]?.root_id);
  const journal = await rows(`SELECT ${h("root_id")}, root_node FROM journal`);
  const journalRoots = new Set(journal.map((row) => String(row.root_id)));
  const heldRoots = new Map(
    journal
      .filter((row) => row.root_node instanceof Uint8Array)
      .map((row) => [String(row.root_id), Buffer.from(row.root_node as Uint8Array)]),
  );
  const pinRoots = new Set(
    (await rows(`SELECT ${h("root_id")} FROM workspace_pin`)).map((row) => String(row.root_id)),
  );
  const chunks = new Set(
    (await rows(`SELECT ${h("prefix_digest")} FROM workspace_chunk`)).map((row) =>
      String(row.prefix_digest),
    ),
  );
  return { objects, current, journalRoots, heldRoots, pinRoots, chunks };
}

/** What the documented retention rule keeps, starting from the given roots. */
export function reachableFrom(tables: StoredTables, retainedRoots: Iterable<string>): ObjectSets {
  const nodes = new Set<string>();
  const files = new Set<string>();
  const chunks = new Set<string>();
  // A node id to look up, or the bytes of a directory held in its entry (no row of its own).
  const pending: (string | Buffer)[] = [...retainedRoots];
  const retained = new Set(pending as string[]);
  const walkedHeld = new Set<string>();
  while (pending.length > 0) {
    const next = pending.pop()!;
    let bytes: Buffer;
    if (typeof next === "string") {
      if (nodes.has(next)) continue;
      const stored = tables.objects.get(next);
      const held = tables.heldRoots.get(next);
      if (stored !== undefined) {
        nodes.add(next);
        bytes = nodeBytes(tables, next);
      } else if (held !== undefined && retained.has(next)) {
        // A root its events hold: no row of its own, but what it names is retained.
        if (walkedHeld.has(next)) continue;
        walkedHeld.add(next);
        bytes = held;
      } else {
        continue;
      }
    } else {
      bytes = next;
    }
    for (const entry of parseNode(bytes).entries) {
      if (entry.kind !== "file") {
        pending.push(entry.content ?? entry.target);
        continue;
      }
      if (entry.content !== undefined) continue; // inline: no object of its own
      files.add(entry.target);
      const file = tables.objects.get(entry.target);
      if (file?.kind === 1) {
        for (let at = 0; at < file.data.length; at += 32) {
          chunks.add(file.data.subarray(at, at + 32).toString("hex"));
        }
      }
    }
  }
  return { nodes, files, chunks };
}

/**
 * A node's bytes as the format documents them: a whole row's data, or a
 * delta (kind 2: base id, then operations — an even LEB128 header 2n inserts
 * the n bytes after it, an odd one 2n + 1 copies n bytes of the base from
 * the LEB128 offset after it) rebuilt onto its base's bytes. A delta's base
 * must be stored and shallower than it; anything else fails the test.
 */
export function nodeBytes(tables: StoredTables, id: string): Buffer {
  const stored = tables.objects.get(id);
  if (stored === undefined) throw new Error(`node ${id} is not stored`);
  if (stored.kind === 0) return stored.data;
  expect(stored.kind, `node ${id}: a node is stored whole or as a delta`).toBe(2);
  const baseId = stored.data.subarray(0, 32).toString("hex");
  const base = tables.objects.get(baseId);
  expect(base, `node ${id}: its delta's base is stored`).toBeDefined();
  expect(base!.depth, `node ${id}: its base is shallower`).toBeLessThan(stored.depth);
  const from = nodeBytes(tables, baseId);
  const out: Buffer[] = [];
  let at = 32;
  while (at < stored.data.length) {
    let header: number;
    [header, at] = readVarint(stored.data, at);
    const length = Math.floor(header / 2);
    if (header % 2 === 0) {
      out.push(stored.data.subarray(at, at + length));
      at += length;
    } else {
      let offset: number;
      [offset, at] = readVarint(stored.data, at);
      out.push(from.subarray(offset, offset + length));
    }
  }
  const bytes = Buffer.concat(out);
  expect(bytes.length, `node ${id}: its delta rebuilds its size`).toBe(stored.size);
  expect(sha256Hex(bytes), `node ${id}: its delta rebuilds its bytes`).toBe(id);
  return bytes;
}

/** Roots retained by the journal (its newest event's is the current one), the pins and the empty root. */
export function retainedRoots(tables: StoredTables): Set<string> {
  return new Set([
    DOCUMENTED_EMPTY_ROOT,
    tables.current,
    ...tables.journalRoots,
    ...tables.pinRoots,
  ]);
}

export function allObjects(tables: StoredTables): ObjectSets {
  const nodes = new Set<string>();
  const files = new Set<string>();
  for (const [id, stored] of tables.objects) {
    if (
      stored.kind === 2 ||
      (stored.kind === 0 && stored.data.subarray(0, NODE_DOMAIN.length).equals(NODE_DOMAIN))
    ) {
      nodes.add(id);
    } else {
      files.add(id);
    }
  }
  return { nodes, files, chunks: new Set(tables.chunks) };
}

/** How many directory nodes, files and pieces of large files the run stores. */
/** A root's node bytes as the format stores them: held by its events (`root_node`), else its row. */
export async function storedRootBytes(lease: RunLease, rootId: string): Promise<Buffer> {
  const tables = await storedTables(lease);
  return tables.heldRoots.get(rootId) ?? nodeBytes(tables, rootId);
}

export async function objectCounts(
  lease: RunLease,
): Promise<{ nodes: number; files: number; chunks: number }> {
  const all = allObjects(await storedTables(lease));
  return { nodes: all.nodes.size, files: all.files.size, chunks: all.chunks.size };
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

// ---------------------------------------------------------------------------
// Directory nodes, written here from docs/file-format.md (prolly trees).

const NODE_DOMAIN = Buffer.from("runledger/node/1\u0000", "utf8");
/** The documented cut rule's constants. */
const CUT_ONE_IN = 32;
const MAX_NODE_ENTRIES = 128;
/** The documented largest file held inside its leaf entry. */
export const INLINE_MAX = 256;
/** The documented largest directory top node held inside its parent's leaf entry. */
export const INLINE_NODE_MAX = 512;

export interface NodeEntry {
  readonly name: string;
  readonly kind: "file" | "directory" | "node";
  /** hex */
  readonly target: string;
  readonly size: number;
  /** An inline file's content (kind byte 0x03), or an inline directory's top node (0x04). */
  readonly content?: Buffer;
}

function varint(value: number): Buffer {
  const bytes: number[] = [];
  while (value >= 0x80) {
    bytes.push((value % 0x80) | 0x80);
    value = Math.floor(value / 0x80);
  }
  bytes.push(value);
  return Buffer.from(bytes);
}

function readVarint(data: Buffer, at: number): [number, number] {
  let value = 0;
  let scale = 1;
  for (;;) {
    const byte = data[at++]!;
    value += (byte & 0x7f) * scale;
    if ((byte & 0x80) === 0) return [value, at];
    scale *= 0x80;
  }
}

/** A node's level and entries, from its stored bytes. */
export function parseNode(data: Buffer): { level: number; entries: NodeEntry[] } {
  expect(data.subarray(0, NODE_DOMAIN.length).equals(NODE_DOMAIN), "a node's domain").toBe(true);
  let at = NODE_DOMAIN.length;
  const level = data[at++]!;
  let count: number;
  [count, at] = readVarint(data, at);
  const entries: NodeEntry[] = [];
  while (count-- > 0) {
    let kind: NodeEntry["kind"] = "node";
    const byte = level === 0 ? data[at++] : undefined;
    if (byte !== undefined) kind = byte === 2 || byte === 4 ? "directory" : "file";
    let length: number;
    [length, at] = readVarint(data, at);
    const name = data.subarray(at, at + length).toString("utf8");
    at += length;
    const target = data.subarray(at, at + 32).toString("hex");
    at += 32;
    let size = 0;
    if (kind === "file") [size, at] = readVarint(data, at);
    if (byte === 3) {
      entries.push({ name, kind, target, size, content: data.subarray(at, at + size) });
      at += size;
    } else if (byte === 4) {
      let length: number;
      [length, at] = readVarint(data, at);
      entries.push({ name, kind, target, size, content: data.subarray(at, at + length) });
      at += length;
    } else {
      entries.push({ name, kind, target, size });
    }
  }
  return { level, entries };
}

/** A node's entries and, recursively, those of the directories held in its entries. */
export function nodeEntries(data: Buffer): NodeEntry[] {
  return parseNode(data).entries.flatMap((entry) =>
    entry.kind === "directory" && entry.content !== undefined
      ? [entry, ...nodeEntries(entry.content)]
      : [entry],
  );
}

/** FNV-1a over the level byte and the name's UTF-8, then MurmurHash3's 32-bit finalizer. */
function cutHash(level: number, name: string): number {
  let h = 0x811c9dc5;
  for (const byte of [level, ...Buffer.from(name, "utf8")]) {
    h = Math.imul(h ^ byte, 0x01000193) >>> 0;
  }
  h = (h ^ (h >>> 16)) >>> 0;
  h = Math.imul(h, 0x85ebca6b) >>> 0;
  h = (h ^ (h >>> 13)) >>> 0;
  h = Math.imul(h, 0xc2b2ae35) >>> 0;
  return (h ^ (h >>> 16)) >>> 0;
}

/** Whether the cut rule ends a node at `level` after the entry named `name` (below MAX_NODE_ENTRIES). */
export function endsNode(level: number, name: string): boolean {
  return cutHash(level, name) % CUT_ONE_IN === 0;
}

/** A node's bytes from the documented encoding, entries as given (tests build bad nodes with it). */
export function encodeNode(level: number, entries: readonly NodeEntry[]): Buffer {
  const parts: Buffer[] = [NODE_DOMAIN, Buffer.from([level]), varint(entries.length)];
  for (const entry of entries) {
    const name = Buffer.from(entry.name, "utf8");
    const inline = entry.content !== undefined;
    if (level === 0) {
      const kind = entry.kind === "directory" ? (inline ? 4 : 2) : inline ? 3 : 1;
      parts.push(Buffer.from([kind]));
    }
    parts.push(varint(name.length), name, Buffer.from(entry.target, "hex"));
    if (entry.kind === "file") parts.push(varint(entry.size));
    else if (entry.content !== undefined) parts.push(varint(entry.content.length));
    if (entry.content !== undefined) parts.push(entry.content);
  }
  return Buffer.concat(parts);
}

/** A directory's top node, id and bytes: entries cut into nodes level by level until one is left. */
function referenceDirectory(entries: NodeEntry[]): { id: string; bytes: Buffer } {
  let level = 0;
  let items = [...entries].sort((a, b) => compareNames(a.name, b.name));
  for (;;) {
    const groups: NodeEntry[][] = [];
    let open: NodeEntry[] = [];
    for (const item of items) {
      open.push(item);
      if (open.length >= MAX_NODE_ENTRIES || cutHash(level, item.name) % CUT_ONE_IN === 0) {
        groups.push(open);
        open = [];
      }
    }
    if (open.length > 0 || groups.length === 0) groups.push(open);
    const nodes = groups.map((group) => encodeNode(level, group));
    const ids = nodes.map((bytes) => sha256Hex(bytes));
    if (groups.length === 1) return { id: ids[0]!, bytes: nodes[0]! };
    items = groups.map((group, i) => ({
      name: group[0]!.name,
      kind: "node",
      target: ids[i]!,
      size: 0,
    }));
    level += 1;
  }
}

function referenceTree(directory: Directory): { id: string; bytes: Buffer } {
  const entries: NodeEntry[] = [];
  for (const [name, bytes] of directory.files) {
    const file = { name, kind: "file", target: sha256Hex(bytes), size: bytes.length } as const;
    entries.push(bytes.length <= INLINE_MAX ? { ...file, content: Buffer.from(bytes) } : file);
  }
  for (const [name, sub] of directory.directories) {
    const top = referenceTree(sub);
    const entry = { name, kind: "directory", target: top.id, size: 0 } as const;
    entries.push(top.bytes.length <= INLINE_NODE_MAX ? { ...entry, content: top.bytes } : entry);
  }
  return referenceDirectory(entries);
}

function referenceTreeId(directory: Directory): string {
  return referenceTree(directory).id;
}

/** The root id the model gives, computed from the documented encoding. */
export function referenceRootId(model: Model): string {
  return referenceTreeId(directoryOf(model));
}

/** `referenceRootId` of files given as text, by path. */
export function referenceTextRootId(files: Readonly<Record<string, string>>): string {
  return referenceRootId(new Map(Object.entries(files).map(([path, text]) => [path, utf8(text)])));
}

/** The top node id of one directory of the model ("" for the top). */
export function referenceDirectoryTreeId(model: Model, directory: string): string {
  let node = directoryOf(model);
  for (const segment of directory === "" ? [] : directory.split("/")) {
    const next = node.directories.get(segment);
    if (next === undefined) throw new Error(`the model has no directory ${directory}`);
    node = next;
  }
  return referenceTreeId(node);
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

/**
 * What an apply of `puts` and `deletes` must do to `model`, written from the
 * documented rules: no path named twice or inside another named path; a put
 * cannot replace a directory or go below a file; a delete needs something
 * there. Returns the codes a refusal may carry (more than one when the batch
 * breaks several rules at once), or none.
 */
export function referenceApply(
  model: Model,
  puts: string[],
  deletes: string[],
): { codes: Set<string> } {
  const codes = new Set<string>();
  const named = [...puts, ...deletes];
  for (let i = 0; i < named.length; i++) {
    for (let j = i + 1; j < named.length; j++) {
      const [x, y] = [named[i]!, named[j]!];
      if (x === y || x.startsWith(`${y}/`) || y.startsWith(`${x}/`)) codes.add("path_conflict");
    }
  }
  if (codes.size > 0) return { codes };
  const isFile = (path: string) => model.has(path);
  const isDirectory = (path: string) => [...model.keys()].some((k) => k.startsWith(`${path}/`));
  const underFile = (path: string) => {
    const segments = path.split("/");
    return segments.slice(1).some((_, i) => isFile(segments.slice(0, i + 1).join("/")));
  };
  for (const path of puts) if (isDirectory(path) || underFile(path)) codes.add("path_conflict");
  for (const path of deletes) {
    if (underFile(path)) codes.add("path_conflict");
    else if (!isFile(path) && !isDirectory(path)) codes.add("path_not_found");
  }
  return { codes };
}
