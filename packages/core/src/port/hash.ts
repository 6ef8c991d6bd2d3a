import { sha256 as nobleSha256 } from "@noble/hashes/sha2.js";

/**
 * SHA-256 from a runtime-agnostic implementation, so core runs unchanged on
 * Node, Deno, Bun and workers. Incremental hashing lets large content be
 * digested chunk by chunk without ever holding it whole.
 */
export function sha256(data: Uint8Array | string): Uint8Array {
  return nobleSha256(typeof data === "string" ? utf8(data) : data);
}

export function sha256Hex(data: Uint8Array | string): string {
  return toHex(sha256(data));
}

/** An incremental SHA-256: `update` any number of times, then `digest` once. */
export interface Sha256Stream {
  update(data: Uint8Array): Sha256Stream;
  digest(): Uint8Array;
}

export function createSha256(): Sha256Stream {
  const state = nobleSha256.create();
  const stream: Sha256Stream = {
    update(data) {
      state.update(data);
      return stream;
    },
    digest: () => state.digest(),
  };
  return stream;
}

const encoder = new TextEncoder();

export function utf8(text: string): Uint8Array {
  return encoder.encode(text);
}

const HEX = Array.from({ length: 256 }, (_, i) => i.toString(16).padStart(2, "0"));

export function toHex(bytes: Uint8Array): string {
  let out = "";
  for (let i = 0; i < bytes.length; i++) out += HEX[bytes[i]!];
  return out;
}
