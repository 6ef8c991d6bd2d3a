/**
 * LEB128 varints, as node entries and deltas count and measure with them:
 * seven bits a byte, low bits first, at most 8 bytes (any safe integer).
 */

export function varintLength(value: number): number {
  let length = 1;
  while (value >= 0x80) {
    value = Math.floor(value / 0x80);
    length++;
  }
  return length;
}

export function writeVarint(bytes: Uint8Array, at: number, value: number): number {
  while (value >= 0x80) {
    bytes[at++] = (value % 0x80) | 0x80;
    value = Math.floor(value / 0x80);
  }
  bytes[at++] = value;
  return at;
}

export function readVarint(bytes: Uint8Array, at: number): [number, number] {
  let value = 0;
  let scale = 1;
  for (let i = 0; i < 8; i++) {
    const byte = bytes[at++];
    if (byte === undefined) throw new RangeError("truncated varint");
    value += (byte & 0x7f) * scale;
    if ((byte & 0x80) === 0) {
      if (!Number.isSafeInteger(value)) throw new RangeError("varint too large");
      return [value, at];
    }
    scale *= 0x80;
  }
  throw new RangeError("varint too long");
}
