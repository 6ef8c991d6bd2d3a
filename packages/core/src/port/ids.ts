/**
 * Default ids: UUID version 7 (RFC 9562) — 48 bits of Unix milliseconds, then
 * random bits. Ids made one after another sort after one another, so an index
 * of them (the journal's event ids, the commit log's txn ids) grows at its
 * right edge: each insert touches the page the last one did, instead of a
 * random page of a large index.
 *
 * Within one millisecond the 12 bits after the version count up (RFC 9562
 * §6.2, method 1), so ids from one process are strictly increasing; when the
 * counter runs out, the timestamp is advanced by one millisecond rather than
 * going backwards.
 */

let lastMs = 0;
let counter = 0;

export function timeOrderedId(now: number = Date.now()): string {
  let ms = Math.max(Math.floor(now), lastMs);
  if (ms === lastMs) {
    counter += 1;
    if (counter > 0xfff) {
      ms += 1;
      counter = 0;
    }
  } else {
    counter = 0;
  }
  lastMs = ms;
  const random = randomBytes(8);
  const bytes = new Uint8Array(16);
  // 48-bit big-endian timestamp; 2^48 ms reaches the year 10889.
  const high = Math.floor(ms / 2 ** 16);
  bytes[0] = (high >>> 24) & 0xff;
  bytes[1] = (high >>> 16) & 0xff;
  bytes[2] = (high >>> 8) & 0xff;
  bytes[3] = high & 0xff;
  bytes[4] = (ms >>> 8) & 0xff;
  bytes[5] = ms & 0xff;
  bytes[6] = 0x70 | (counter >>> 8); // version 7, counter high bits
  bytes[7] = counter & 0xff;
  bytes[8] = 0x80 | (random[0]! & 0x3f); // variant 10
  bytes.set(random.subarray(1), 9);
  let hex = "";
  for (const byte of bytes) hex += HEX[byte];
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}`;
}

/** Random bytes from a pool refilled 4 KiB at a time: one system call per 512 ids. */
const pool = new Uint8Array(4096);
let poolOffset = pool.length;

function randomBytes(count: number): Uint8Array {
  if (poolOffset + count > pool.length) {
    crypto.getRandomValues(pool);
    poolOffset = 0;
  }
  const bytes = pool.subarray(poolOffset, poolOffset + count);
  poolOffset += count;
  return bytes;
}

const HEX = Array.from({ length: 256 }, (_, i) => i.toString(16).padStart(2, "0"));
