/**
 * File content. A file of at most INLINE_MAX bytes is held in its directory's
 * leaf entry (node.ts) and has no row. A file of at most CHUNK_SIZE bytes is
 * one object row holding its bytes, addressed by their SHA-256 (one row, one
 * hash). A larger file is
 * cut into CHUNK_SIZE pieces as it arrives, so writing or reading it holds
 * one piece in memory, never the file:
 * - each piece is a row of `workspace_chunk` addressed by the SHA-256 of the
 *   file's bytes *from its start through that piece* — the running hash's
 *   state at that point, copied. So every byte is hashed exactly once, the
 *   last piece's address is the file's digest, and a file that grows at its
 *   end (a log, a history) shares every earlier piece with its previous
 *   version: only the new pieces are written;
 * - the file's object row (addressed by the file's SHA-256) holds the list
 *   of its pieces' addresses, 32 bytes each.
 */
import type { Executor } from "../port/driver.js";
import { RunledgerError } from "../port/errors.js";
import type { HashFunctions } from "../port/hash.js";
import { placeholders } from "../port/placeholders.js";
import { utf8 } from "../port/text.js";
import { idKey } from "./id-key.js";
import { INLINE_MAX } from "./node.js";
import { OBJECT_BY_ID, OBJECT_KEY_PREFIX_BYTES, objectKey } from "./object-key.js";
import { BYTES, CHUNK_LIST, type ObjectRow } from "./object-rows.js";

/** The size blobs are cut into when written. Readers follow each blob's own chunk list. */
export const CHUNK_SIZE = 256 * 1024;

/** The part of a web ReadableStream that content is read from. */
export interface ReadableStreamLike<T> {
  getReader(): {
    read(): Promise<{ done: boolean; value?: T }>;
    releaseLock(): void;
  };
}

/** What a workspace file's content may be given as. */
export type Content =
  | Uint8Array
  | string
  | AsyncIterable<Uint8Array>
  | Iterable<Uint8Array>
  | ReadableStreamLike<Uint8Array>;

export interface StoredFile {
  readonly digest: Uint8Array;
  readonly size: number;
  /** The bytes of a file of at most INLINE_MAX bytes, to hold in its entry. */
  readonly content?: Uint8Array;
}

/** Stores a piece once; copy.ts writes pieces with it too. */
export const INSERT_CHUNK =
  "INSERT INTO workspace_chunk (prefix_digest, data) VALUES (?, ?) ON CONFLICT DO NOTHING";
/** Whether an object is stored, by id (bind `objectKey(id)`); verify asks it too. */
export const HAS_OBJECT = `SELECT 1 FROM workspace_object WHERE ${OBJECT_BY_ID}`;
/** One object's row by id (bind `objectKey(id)`); copy.ts reads objects with it too. */
export const READ_OBJECT = `SELECT kind, size, data FROM workspace_object WHERE ${OBJECT_BY_ID}`;
/** One piece's bytes by its key; copy.ts and verify read pieces with it too. */
export const READ_CHUNK = "SELECT data FROM workspace_chunk WHERE prefix_digest = ?";
const KEYS_PER_QUERY = 256;

/**
 * Stores content. A small file's row is added to `rows` for the caller to
 * write with the operation's other objects; a large file's pieces and row
 * are written here, as they arrive.
 */
export async function storeFile(
  executor: Executor,
  content: Content,
  hash: HashFunctions,
  rows: ObjectRow[],
): Promise<StoredFile> {
  if (typeof content === "string" || content instanceof Uint8Array) {
    const bytes = typeof content === "string" ? utf8(content) : content;
    if (bytes.length <= CHUNK_SIZE) return small(bytes, hash, rows);
    return storeKnownBytes(executor, bytes, hash);
  }
  return storeStream(executor, content, hash, rows);
}

/**
 * Whether storing `content` writes rows at once (its chunks: a large file,
 * or a stream, whose size is not known before it is read). A small file's
 * row, if any, is written with the apply's nodes. A string is judged by its
 * length, three bytes a character at most.
 */
export function writesWhenStored(content: Content): boolean {
  if (content instanceof Uint8Array) return content.length > CHUNK_SIZE;
  if (typeof content === "string") return content.length * 3 > CHUNK_SIZE;
  return true;
}

function small(bytes: Uint8Array, hash: HashFunctions, rows: ObjectRow[]): StoredFile {
  if (bytes.length <= INLINE_MAX) return inEntry(bytes, hash);
  const digest = hash.sha256(bytes);
  rows.push({ id: digest, kind: BYTES, size: bytes.length, data: bytes });
  return { digest, size: bytes.length };
}

/**
 * Stores content given whole of at most CHUNK_SIZE bytes, as `storeFile`
 * does (its row, if it has one, added to `rows`); undefined, nothing done,
 * for any other content: a large file or a stream, whose pieces `storeFile`
 * writes as they arrive.
 */
export function storeSmallFile(
  content: Content,
  hash: HashFunctions,
  rows: ObjectRow[],
): StoredFile | undefined {
  if (typeof content !== "string" && !(content instanceof Uint8Array)) return undefined;
  // A string has at least as many bytes as it has characters: a long one is not encoded twice.
  if (content.length > CHUNK_SIZE) return undefined;
  const bytes = typeof content === "string" ? utf8(content) : content;
  return bytes.length <= CHUNK_SIZE ? small(bytes, hash, rows) : undefined;
}

/**
 * Stores content of at most INLINE_MAX bytes given whole, which is held in
 * its entry and has no row; undefined for any other content.
 */
export function storeHeldFile(content: Content, hash: HashFunctions): StoredFile | undefined {
  if (content instanceof Uint8Array)
    return content.length <= INLINE_MAX ? inEntry(content, hash) : undefined;
  if (typeof content !== "string" || content.length > INLINE_MAX) return undefined;
  const bytes = utf8(content);
  return bytes.length <= INLINE_MAX ? inEntry(bytes, hash) : undefined;
}

/** A small file stored: its digest, and a copy of its bytes for its entry. */
function inEntry(bytes: Uint8Array, hash: HashFunctions): StoredFile {
  // A copy: the entry outlives the call (nodes are cached), the caller's array
  // may change. Made by the constructor, not `slice`: a subclass's slice need
  // not copy (Node's Buffer's is a view of the same memory).
  return { digest: hash.sha256(bytes), size: bytes.length, content: new Uint8Array(bytes) };
}

/** A large file given whole: hashed once, then only the pieces not stored yet are written. */
async function storeKnownBytes(
  executor: Executor,
  bytes: Uint8Array,
  hash: HashFunctions,
): Promise<StoredFile> {
  const running = hash.createSha256();
  const keys: Uint8Array[] = [];
  for (let at = 0; at < bytes.length; at += CHUNK_SIZE) {
    running.update(bytes.subarray(at, at + CHUNK_SIZE));
    keys.push(running.copy().digest());
  }
  const digest = keys.at(-1)!;
  if ((await executor.execute(HAS_OBJECT, objectKey(digest))).rows.length === 0) {
    const present = await presentChunks(executor, keys);
    for (const [i, key] of keys.entries()) {
      if (present.has(i)) continue;
      await executor.execute(INSERT_CHUNK, [
        key,
        bytes.subarray(i * CHUNK_SIZE, (i + 1) * CHUNK_SIZE),
      ]);
    }
    await writeChunkList(executor, digest, bytes.length, keys);
  }
  return { digest, size: bytes.length };
}

/** Which of `keys` (by position) are stored already: a few statements, not one per piece. */
async function presentChunks(executor: Executor, keys: Uint8Array[]): Promise<Set<number>> {
  const present = new Set<number>();
  const position = new Map(keys.map((key, i) => [idKey(key), i]));
  for (let start = 0; start < keys.length; start += KEYS_PER_QUERY) {
    const batch = keys.slice(start, start + KEYS_PER_QUERY);
    const { rows } = await executor.execute(
      `SELECT prefix_digest FROM workspace_chunk WHERE prefix_digest IN ${placeholders(1, batch.length)}`,
      batch,
    );
    for (const row of rows) {
      const i = position.get(idKey(row.prefix_digest as Uint8Array));
      if (i !== undefined) present.add(i);
    }
  }
  return present;
}

async function writeChunkList(
  executor: Executor,
  digest: Uint8Array,
  size: number,
  keys: readonly Uint8Array[],
): Promise<void> {
  const list = new Uint8Array(keys.length * 32);
  for (const [i, key] of keys.entries()) list.set(key, i * 32);
  // A file already stored is left as it is (the schema's trigger skips the row).
  await executor.execute(
    "INSERT INTO workspace_object (id, kind, size, data) VALUES (?, ?, ?, ?)",
    [digest, CHUNK_LIST, size, list],
  );
}

/** A stream: each piece written as it completes; one that ends within one piece is a small file. */
async function storeStream(
  executor: Executor,
  content: Exclude<Content, string | Uint8Array>,
  hash: HashFunctions,
  rows: ObjectRow[],
): Promise<StoredFile> {
  const running = hash.createSha256();
  const keys: Uint8Array[] = [];
  let size = 0;
  /** The first full piece, held until a second shows the file is large. */
  let held: Uint8Array | undefined;
  const write = async (piece: Uint8Array) => {
    running.update(piece);
    size += piece.length;
    const key = running.copy().digest();
    await executor.execute(INSERT_CHUNK, [key, piece]);
    keys.push(key);
  };
  const chunker = new Chunker(CHUNK_SIZE);
  for await (const piece of pieces(content)) {
    for (const chunk of chunker.push(piece)) {
      if (keys.length === 0 && held === undefined) {
        held = new Uint8Array(chunk); // a copy, whatever the source's arrays are
        continue;
      }
      if (held !== undefined) {
        await write(held);
        held = undefined;
      }
      await write(chunk);
    }
  }
  const rest = chunker.rest();
  if (keys.length === 0 && (held === undefined || rest === undefined)) {
    // Everything fits one piece: the one held, or what is left.
    return small(held ?? new Uint8Array(rest ?? new Uint8Array(0)), hash, rows);
  }
  if (held !== undefined) await write(held);
  if (rest !== undefined) await write(rest);
  const digest = keys.at(-1)!;
  await writeChunkList(executor, digest, size, keys);
  return { digest, size };
}

/** A file's bytes, one piece at a time (a small file in one). */
export async function* streamFile(
  executor: Executor,
  digest: Uint8Array,
): AsyncGenerator<Uint8Array> {
  const row = await readObject(executor, digest);
  if (row.kind === BYTES) {
    yield row.data;
    return;
  }
  for (let at = 0; at < row.data.length; at += 32) {
    const chunk = (await executor.execute(READ_CHUNK, [row.data.subarray(at, at + 32)])).rows[0];
    if (chunk === undefined) {
      throw new RunledgerError(
        "corrupt",
        `piece ${at / 32} of a stored file is missing; run verify, then restore the run from a copy`,
      );
    }
    yield chunk.data as Uint8Array;
  }
}

/** A file's bytes, whole. For large files prefer streamFile. */
export async function readFile(executor: Executor, digest: Uint8Array): Promise<Uint8Array> {
  const row = await readObject(executor, digest);
  if (row.kind === BYTES) return row.data;
  const out = new Uint8Array(row.size);
  let offset = 0;
  for await (const chunk of streamFile(executor, digest)) {
    if (offset + chunk.length > row.size) break;
    out.set(chunk, offset);
    offset += chunk.length;
  }
  if (offset !== row.size) {
    throw new RunledgerError(
      "corrupt",
      "a stored file's pieces do not add up to its size; run verify",
    );
  }
  return out;
}

/**
 * The contents of many files, in the order of `digests`: the one-row files
 * fetched a few statements at a time (KEYS_PER_QUERY ids a statement, by
 * the id index's prefix, each row's full id compared), a chunked file read
 * piece by piece as `readFile` reads it.
 */
export async function readFiles(
  executor: Executor,
  digests: readonly Uint8Array[],
): Promise<Uint8Array[]> {
  const found = new Map<string, Uint8Array>();
  const wanted = [...new Map(digests.map((digest) => [idKey(digest), digest])).values()];
  for (let start = 0; start < wanted.length; start += KEYS_PER_QUERY) {
    const batch = wanted.slice(start, start + KEYS_PER_QUERY);
    const { rows } = await executor.execute(
      `SELECT id, kind, data FROM workspace_object WHERE substr(id, 1, ${OBJECT_KEY_PREFIX_BYTES}) IN ${placeholders(1, batch.length)}`,
      batch.map((digest) => digest.slice(0, OBJECT_KEY_PREFIX_BYTES)),
    );
    for (const row of rows) {
      if (Number(row.kind) === BYTES)
        found.set(idKey(row.id as Uint8Array), row.data as Uint8Array);
    }
  }
  const out: Uint8Array[] = [];
  for (const digest of digests) {
    const bytes = found.get(idKey(digest));
    // The same bytes for a digest named twice: each caller gets its own copy.
    out.push(bytes === undefined ? await readFile(executor, digest) : bytes.slice());
  }
  return out;
}

async function readObject(
  executor: Executor,
  digest: Uint8Array,
): Promise<{ kind: number; size: number; data: Uint8Array }> {
  const row = (await executor.execute(READ_OBJECT, objectKey(digest))).rows[0];
  if (row === undefined) {
    throw new RunledgerError(
      "corrupt",
      "a file's content is missing from the object store; run verify, then restore the run from a copy",
    );
  }
  return { kind: Number(row.kind), size: Number(row.size), data: row.data as Uint8Array };
}

/** Cuts a byte stream into pieces of exactly `size` bytes (the last may be shorter). */
class Chunker {
  readonly #size: number;
  /** Allocated on the first piece that does not fill a chunk by itself. */
  #buffer: Uint8Array | undefined;
  #filled = 0;

  constructor(size: number) {
    this.#size = size;
  }

  /** Full chunks completed by `piece`. Each is valid until the next call. */
  *push(piece: Uint8Array): Generator<Uint8Array> {
    let offset = 0;
    while (offset < piece.length) {
      if (this.#filled === 0 && piece.length - offset >= this.#size) {
        yield piece.subarray(offset, offset + this.#size);
        offset += this.#size;
        continue;
      }
      this.#buffer ??= new Uint8Array(this.#size);
      const n = Math.min(this.#size - this.#filled, piece.length - offset);
      this.#buffer.set(piece.subarray(offset, offset + n), this.#filled);
      this.#filled += n;
      offset += n;
      if (this.#filled === this.#size) {
        this.#filled = 0;
        yield this.#buffer;
      }
    }
  }

  rest(): Uint8Array | undefined {
    return this.#filled === 0 ? undefined : this.#buffer?.subarray(0, this.#filled);
  }
}

async function* pieces(content: Exclude<Content, string | Uint8Array>): AsyncGenerator<Uint8Array> {
  if (Symbol.asyncIterator in content || Symbol.iterator in content) {
    for await (const piece of content as AsyncIterable<Uint8Array>) yield checkPiece(piece);
    return;
  }
  const reader = content.getReader();
  try {
    for (;;) {
      const { done, value } = await reader.read();
      if (done) return;
      if (value !== undefined) yield checkPiece(value);
    }
  } finally {
    reader.releaseLock();
  }
}

function checkPiece(piece: unknown): Uint8Array {
  if (piece instanceof Uint8Array) return piece;
  throw new RunledgerError(
    "invalid_content",
    "a content stream must yield Uint8Array pieces; encode text before streaming it",
  );
}
