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
import { HEX_PAIRS } from "./bytes.js";

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
  const r = randomBytes(8);
  // 48-bit big-endian timestamp (2^48 ms reaches the year 10889), version 7
  // with the counter, variant 10, random bits: 8-4-4-4-12 hex digits.
  const high = Math.floor(ms / 2 ** 16);
  return (
    HEX_PAIRS[(high >>> 24) & 0xff]! +
    HEX_PAIRS[(high >>> 16) & 0xff]! +
    HEX_PAIRS[(high >>> 8) & 0xff]! +
    HEX_PAIRS[high & 0xff]! +
    "-" +
    HEX_PAIRS[(ms >>> 8) & 0xff]! +
    HEX_PAIRS[ms & 0xff]! +
    "-" +
    HEX_PAIRS[0x70 | (counter >>> 8)]! +
    HEX_PAIRS[counter & 0xff]! +
    "-" +
    HEX_PAIRS[0x80 | (r[0]! & 0x3f)]! +
    HEX_PAIRS[r[1]!]! +
    "-" +
    HEX_PAIRS[r[2]!]! +
    HEX_PAIRS[r[3]!]! +
    HEX_PAIRS[r[4]!]! +
    HEX_PAIRS[r[5]!]! +
    HEX_PAIRS[r[6]!]! +
    HEX_PAIRS[r[7]!]!
  );
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
