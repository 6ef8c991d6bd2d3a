/**
 * Bytes as they travel: digests and ids are hex in the API and bytes in the
 * database, so the one conversion between the two forms lives here, with the
 * byte comparison every layer that holds ids needs.
 */

/** Each byte value's two lower-case hex digits: the table the id generator (ids.ts) reads. */
export const HEX_PAIRS: readonly string[] = Array.from({ length: 256 }, (_, i) =>
  i.toString(16).padStart(2, "0"),
);

/** The hex digits as character codes, for `toHex`. */
const DIGITS = new TextEncoder().encode("0123456789abcdef");
const ASCII = new TextDecoder();
/** Where a digest's digits are written before they are decoded, once, as one string. */
const DIGEST_DIGITS = new Uint8Array(64);

/**
 * Bytes as lower-case hex, two characters a byte: how digests and ids travel
 * in the API. The digits are written as bytes and decoded into one string:
 * adding the string two characters at a time would make one intermediate
 * string per byte (a digest's hex: ~1 KB of them, and twice the time).
 */
export function toHex(bytes: Uint8Array): string {
  const length = bytes.length * 2;
  const digits = length <= DIGEST_DIGITS.length ? DIGEST_DIGITS : new Uint8Array(length);
  for (let i = 0, at = 0; i < bytes.length; i++) {
    const byte = bytes[i]!;
    digits[at++] = DIGITS[byte >> 4]!;
    digits[at++] = DIGITS[byte & 15]!;
  }
  return ASCII.decode(digits.subarray(0, length));
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
