/**
 * Bytes as they travel: digests and ids are hex in the API and bytes in the
 * database, so the one conversion between the two forms lives here, with the
 * byte comparison every layer that holds ids needs.
 */

/** Each byte value's two lower-case hex digits: the table `toHex` (and the id generator) reads. */
export const HEX_PAIRS: readonly string[] = Array.from({ length: 256 }, (_, i) =>
  i.toString(16).padStart(2, "0"),
);

/** Bytes as lower-case hex, two characters a byte: how digests and ids travel in the API. */
export function toHex(bytes: Uint8Array): string {
  let out = "";
  for (let i = 0; i < bytes.length; i++) out += HEX_PAIRS[bytes[i]!];
  return out;
}

/**
 * Hex back to bytes: the inverse of `toHex`. The caller has checked the text
 * (even length, hex digits only; either case decodes).
 */
export function fromHex(hex: string): Uint8Array {
  const bytes = new Uint8Array(hex.length >> 1);
  for (let i = 0; i < bytes.length; i++) {
    bytes[i] = Number.parseInt(hex.slice(i * 2, i * 2 + 2), 16);
  }
  return bytes;
}

/** True when two byte arrays hold the same bytes. */
export function sameBytes(a: Uint8Array, b: Uint8Array): boolean {
  if (a.length !== b.length) return false;
  for (let i = 0; i < a.length; i++) if (a[i] !== b[i]) return false;
  return true;
}
