/**
 * Blobs: a file's bytes, addressed by their SHA-256, stored as an ordered
 * list of content-addressed chunks. Content arrives as bytes, text, or a
 * stream; it is cut into CHUNK_SIZE pieces as it arrives, so writing or
 * reading a file of any size holds one chunk in memory, not the file.
 */
import type { Executor } from "../port/driver.js";
import { RunledgerError } from "../port/errors.js";
import { createSha256, sha256, utf8 } from "../port/hash.js";
import { CHUNK_SIZE } from "../run/schema-v1.js";

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

export interface StoredBlob {
  readonly digest: Uint8Array;
  readonly size: number;
}

const INSERT_CHUNK =
  "INSERT INTO workspace_chunk (chunk_digest, data) VALUES (?, ?) ON CONFLICT DO NOTHING";
const INSERT_BLOB = `INSERT INTO workspace_blob (digest, size, chunk_count) VALUES (?, ?, ?)
ON CONFLICT DO NOTHING`;
const INSERT_BLOB_CHUNK =
  "INSERT INTO workspace_blob_chunk (digest, ordinal, chunk_digest) VALUES (?, ?, ?)";
const BLOB_SIZE = "SELECT size, chunk_count FROM workspace_blob WHERE digest = ?";
const READ_CHUNK = `SELECT c.data FROM workspace_blob_chunk b
JOIN workspace_chunk c ON c.chunk_digest = b.chunk_digest
WHERE b.digest = ? AND b.ordinal = ?`;

/** Stores content as a blob (once per digest) and returns its digest and size. */
export async function storeBlob(
  executor: Executor,
  content: Content,
  chunkSize: number = CHUNK_SIZE,
): Promise<StoredBlob> {
  if (typeof content === "string" || content instanceof Uint8Array) {
    return storeBytes(executor, typeof content === "string" ? utf8(content) : content, chunkSize);
  }
  return writeChunks(executor, content, chunkSize);
}

/**
 * Known bytes: the blob row goes first, so content already stored costs one
 * statement and no chunk writes. A blob of one chunk is that chunk, so its
 * digest is hashed once.
 */
async function storeBytes(
  executor: Executor,
  bytes: Uint8Array,
  chunkSize: number,
): Promise<StoredBlob> {
  const digest = sha256(bytes);
  const chunkCount = Math.ceil(bytes.length / chunkSize);
  const inserted = await executor.execute(INSERT_BLOB, [digest, bytes.length, chunkCount]);
  if (inserted.changes === 1) {
    for (let ordinal = 0; ordinal < chunkCount; ordinal++) {
      const chunk = bytes.subarray(ordinal * chunkSize, (ordinal + 1) * chunkSize);
      const chunkDigest = chunkCount === 1 ? digest : sha256(chunk);
      await executor.execute(INSERT_CHUNK, [chunkDigest, chunk]);
      await executor.execute(INSERT_BLOB_CHUNK, [digest, ordinal, chunkDigest]);
    }
  }
  return { digest, size: bytes.length };
}

async function writeChunks(
  executor: Executor,
  content: Exclude<Content, string | Uint8Array>,
  chunkSize: number,
): Promise<StoredBlob> {
  const whole = createSha256();
  const chunkDigests: Uint8Array[] = [];
  let size = 0;
  const writeChunk = async (chunk: Uint8Array) => {
    whole.update(chunk);
    size += chunk.length;
    const chunkDigest = sha256(chunk);
    await executor.execute(INSERT_CHUNK, [chunkDigest, chunk]);
    chunkDigests.push(chunkDigest);
  };
  const chunker = new Chunker(chunkSize);
  for await (const piece of pieces(content)) {
    for (const chunk of chunker.push(piece)) await writeChunk(chunk);
  }
  const last = chunker.rest();
  if (last !== undefined) await writeChunk(last);
  const digest = whole.digest();
  const inserted = await executor.execute(INSERT_BLOB, [digest, size, chunkDigests.length]);
  if (inserted.changes === 1) {
    for (const [ordinal, chunkDigest] of chunkDigests.entries()) {
      await executor.execute(INSERT_BLOB_CHUNK, [digest, ordinal, chunkDigest]);
    }
  }
  return { digest, size };
}

/** The blob's bytes, one chunk at a time. */
export async function* streamBlob(
  executor: Executor,
  digest: Uint8Array,
): AsyncGenerator<Uint8Array> {
  const { chunkCount } = await blobSize(executor, digest);
  for (let ordinal = 0; ordinal < chunkCount; ordinal++) {
    const row = (await executor.execute(READ_CHUNK, [digest, ordinal])).rows[0];
    if (row === undefined) {
      throw new RunledgerError(
        "corrupt",
        `chunk ${ordinal} of a stored file is missing; run verify`,
      );
    }
    yield row.data as Uint8Array;
  }
}

/** The blob's bytes, whole. For large files prefer streamBlob. */
export async function readBlob(executor: Executor, digest: Uint8Array): Promise<Uint8Array> {
  const { size } = await blobSize(executor, digest);
  const out = new Uint8Array(size);
  let offset = 0;
  for await (const chunk of streamBlob(executor, digest)) {
    if (offset + chunk.length > size) break;
    out.set(chunk, offset);
    offset += chunk.length;
  }
  if (offset !== size) {
    throw new RunledgerError(
      "corrupt",
      "a stored file's chunks do not add up to its size; run verify",
    );
  }
  return out;
}

export async function blobSize(
  executor: Executor,
  digest: Uint8Array,
): Promise<{ size: number; chunkCount: number }> {
  const row = (await executor.execute(BLOB_SIZE, [digest])).rows[0];
  if (row === undefined) {
    throw new RunledgerError(
      "corrupt",
      "a file's content is missing from the blob store; run verify",
    );
  }
  return { size: Number(row.size), chunkCount: Number(row.chunk_count) };
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
