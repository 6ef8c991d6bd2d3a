/**
 * SHA-256: content addresses are digests, so core hashes with one of two
 * implementations — its own portable one, or a runtime's native one that an
 * adapter hands in through the port — and both give the same digests. How a
 * digest travels (hex in the API, bytes in the database) is ./bytes.ts.
 */
import { sha256 as nobleSha256 } from "@noble/hashes/sha2.js";
import { toHex } from "./bytes.js";
import { utf8 } from "./text.js";
import { plainBytes } from "./values.js";

/**
 * SHA-256, two ways. Core always has the portable one (a runtime-agnostic
 * implementation, so it runs unchanged on Node, Deno, Bun and workers); an
 * adapter whose runtime hashes natively hands core that one through the port
 * (`Driver.hash`), which is about ten times faster on large content. Both
 * give the same digests: only speed differs.
 *
 * Incremental hashing lets large content be digested chunk by chunk without
 * ever holding it whole, and `copy` lets the digest of every prefix be taken
 * along the way without hashing any byte twice (as core does for the
 * pieces of a large file).
 */
export interface HashFunctions {
  /** A short name for messages and benchmarks ("portable", "node:crypto"). */
  readonly name: string;
  sha256(data: Uint8Array): Uint8Array;
  createSha256(): Sha256Stream;
}

/** An incremental SHA-256: `update` any number of times, then `digest` once. */
export interface Sha256Stream {
  update(data: Uint8Array): Sha256Stream;
  /** The digest of everything given so far; the stream is finished afterwards. */
  digest(): Uint8Array;
  /** An independent stream in the same state: its digest is that of the bytes so far. */
  copy(): Sha256Stream;
}

function portableStream(state: ReturnType<typeof nobleSha256.create>): Sha256Stream {
  const stream: Sha256Stream = {
    update(data) {
      state.update(data);
      return stream;
    },
    digest: () => state.digest(),
    copy: () => portableStream(state.clone()),
  };
  return stream;
}

/** The runtime-agnostic SHA-256 core falls back to when a driver brings none. */
export const portableHash: HashFunctions = Object.freeze({
  name: "portable",
  sha256: (data: Uint8Array) => nobleSha256(data),
  createSha256: () => portableStream(nobleSha256.create()),
});

/** The shape of a runtime's own incremental hash (Node's `crypto.createHash("sha256")`). */
export interface RuntimeHash {
  update(data: Uint8Array): unknown;
  digest(): Uint8Array;
  copy(): RuntimeHash;
}

/**
 * HashFunctions over a runtime's own SHA-256, for an adapter to hand core
 * (`Driver.hash`). Digests come back as plain Uint8Array copies, never the
 * runtime's own byte type. `digest`, when the runtime has one, hashes a
 * whole input in one call: a step hashes a few small nodes and files, where
 * building an incremental state per input costs more than the hashing
 * (Node's `crypto.hash`: about half of `createHash` for a few hundred bytes).
 */
export function runtimeHash(
  name: string,
  create: () => RuntimeHash,
  digest?: (data: Uint8Array) => Uint8Array,
): HashFunctions {
  const wrap = (state: RuntimeHash): Sha256Stream => {
    const stream: Sha256Stream = {
      update(data) {
        state.update(data);
        return stream;
      },
      digest: () => plain(state.digest()),
      copy: () => wrap(state.copy()),
    };
    return stream;
  };
  return Object.freeze({
    name,
    sha256:
      digest === undefined
        ? (data: Uint8Array) => {
            const state = create();
            state.update(data);
            return plain(state.digest());
          }
        : (data: Uint8Array) => plain(digest(data)),
    createSha256: () => wrap(create()),
  });
}

/**
 * A runtime's digest as a plain Uint8Array. One that owns its memory (Node's
 * do) is viewed, not copied: a copy of 32 bytes is a new array on the
 * JavaScript heap, which a driver binding it as a parameter must first move
 * off that heap — about a microsecond for every id a step writes. One that is
 * a slice of a larger pool is copied, so that an id kept for long does not
 * keep the pool alive.
 */
function plain(digest: Uint8Array): Uint8Array {
  return digest.byteOffset === 0 && digest.buffer.byteLength === digest.byteLength
    ? plainBytes(digest)
    : new Uint8Array(digest);
}

/**
 * What `node:crypto` offers (Node, and the runtimes that provide that module):
 * handed in by an adapter, since core imports no `node:` module.
 */
export interface NodeCrypto {
  createHash(algorithm: "sha256"): RuntimeHash;
  /** One-shot hashing: Node 20.12 and later. Core asks for the digest as a "binary" (latin1) string. */
  hash?: (algorithm: "sha256", data: Uint8Array, encoding: "binary") => string;
}

/**
 * HashFunctions over `node:crypto`: whole inputs through its one-shot `hash`
 * where it has one, streams through `createHash`.
 *
 * The one-shot digest is asked for as a "binary" string — one character per
 * byte — and read into a new array: Node builds a digest asked for as a
 * Buffer in memory of its own outside the JavaScript heap, which costs about
 * a microsecond more than the hash (Node 20, the bench machine: 1.3–1.9 µs a
 * digest of 200 bytes as a Buffer, 0.4–0.5 as the string read into an array).
 * Most digests a step takes are never bound (a file's and a subdirectory's
 * ids go into their parent node's bytes); one that is bound pays that move
 * when the driver binds it, as it did before.
 */
export function nodeCryptoHash(crypto: NodeCrypto): HashFunctions {
  const streams = runtimeHash("node:crypto", () => crypto.createHash("sha256"));
  const { hash } = crypto;
  if (typeof hash !== "function") return streams;
  const oneShot = (data: Uint8Array) => binaryDigest(hash("sha256", data, "binary"));
  // Content addresses are digests: a runtime whose "binary" string is not a byte a character
  // (a `node:crypto` of another runtime) hashes through its streams instead.
  if (toHex(oneShot(KNOWN_INPUT)) !== KNOWN_DIGEST) return streams;
  // A new array of 32 bytes is already plain, and asking for its buffer would move it off the heap.
  return Object.freeze({ ...streams, sha256: oneShot });
}

/** A known answer, with digest bytes above 0x7f: SHA-256("abc") (FIPS 180-2). */
const KNOWN_INPUT = Uint8Array.of(0x61, 0x62, 0x63);
const KNOWN_DIGEST = "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad";

/** A digest given as a "binary" string (a byte per character), as bytes. */
function binaryDigest(text: string): Uint8Array {
  const bytes = new Uint8Array(text.length);
  for (let i = 0; i < text.length; i++) bytes[i] = text.charCodeAt(i);
  return bytes;
}

/** SHA-256 with the portable implementation (for small inputs: names, schemas, keys). */
export function sha256(data: Uint8Array | string): Uint8Array {
  return nobleSha256(typeof data === "string" ? utf8(data) : data);
}

export function sha256Hex(data: Uint8Array | string): string {
  return toHex(sha256(data));
}

export function createSha256(): Sha256Stream {
  return portableHash.createSha256();
}
