/**
 * The journal's digest chain. Each event row carries the SHA-256 of the
 * digest before it and of its own fields, so a byte changed in any event —
 * a record still valid JSON, a key, a root, two events swapped — breaks a
 * link `verify` finds, and no event can be changed, dropped from the middle
 * or reordered without rewriting every event after it.
 *
 * The digest covers every field that says what the event is: its sequence,
 * event id, idempotency key, record text, the root it records and when it
 * was written. Not `root_node`: those bytes are a copy of the root's node,
 * held in the row so a step need not store it apart (../workspace/roots.ts),
 * and they are checked against the root id the digest covers (verify
 * re-hashes every held root); hashing them would cost a step up to
 * INLINE_NODE_MAX more bytes for nothing.
 *
 * The input is a canonical encoding, so that two different events can never
 * give the same bytes: a domain tag (so a digest of an event is never that
 * of anything else core hashes), the previous digest (32 bytes), then the
 * fields in a fixed order, fixed-size ones as they are (the sequence and the
 * time as 8-byte big-endian integers, the root's 32 bytes) and texts as
 * their UTF-8 bytes after a 4-byte big-endian length; the key, which may be
 * absent, after one byte saying whether it is there.
 *
 * The first event of a new run chains from GENESIS_DIGEST (32 zero bytes).
 * Where the oldest event kept chains from something else — the source's
 * digest for a fork's first event, the digest of the last event pruned — the
 * `journal_anchor` row records it, with that event's sequence (see
 * docs/file-format.md).
 */
import { sameBytes } from "../port/bytes.js";
import type { Executor } from "../port/driver.js";
import type { HashFunctions } from "../port/hash.js";
import { keysetRows } from "../port/keyset.js";
import type { Row } from "../port/values.js";
import type { WriteScope } from "../transaction/scope.js";

/** What the first event of a run with no anchor chains from: 32 zero bytes. */
export const GENESIS_DIGEST: Uint8Array = new Uint8Array(32);

/** Prefixes every event's digest input: "runledger journal event v1" and a zero byte. */
const DOMAIN = new TextEncoder().encode("runledger journal event v1\0");

/** The fields of one event the digest covers, as stored. */
export interface ChainedEvent {
  readonly sequence: number;
  readonly eventId: string;
  readonly key: string | null;
  readonly record: string;
  readonly root: Uint8Array;
  readonly writtenAt: number;
}

const encoder = new TextEncoder();

/** Bytes a digest input is laid out in, with a view to write its integers. */
interface Scratch {
  readonly bytes: Uint8Array;
  readonly view: DataView;
}

function scratchOf(length: number): Scratch {
  const bytes = new Uint8Array(length);
  return { bytes, view: new DataView(bytes.buffer) };
}

/**
 * Reused for every digest input up to KEPT_SCRATCH bytes: a step hashes one
 * small event, and allocating its bytes would cost more. A larger event (a
 * record of megabytes) gets bytes of its own, so one large record never
 * leaves the process holding that much for good.
 */
const KEPT_SCRATCH = 64 * 1024;
let kept = scratchOf(4096);

/** The event's digest: SHA-256 of the domain tag, `previous` and the event's fields (see above). */
export function eventDigest(
  hash: HashFunctions,
  previous: Uint8Array,
  event: ChainedEvent,
): Uint8Array {
  const { eventId, key, record } = event;
  // At most three UTF-8 bytes per UTF-16 code unit.
  const most =
    DOMAIN.length +
    32 +
    8 +
    8 +
    32 +
    13 +
    3 * (eventId.length + record.length + (key?.length ?? 0));
  if (kept.bytes.length < most && most <= KEPT_SCRATCH) {
    kept = scratchOf(Math.min(KEPT_SCRATCH, Math.max(most, kept.bytes.length * 2)));
  }
  const scratch = most <= kept.bytes.length ? kept : scratchOf(most);
  const { bytes } = scratch;
  bytes.set(DOMAIN, 0);
  let at = DOMAIN.length;
  bytes.set(previous, at);
  at += 32;
  at = putInteger(scratch, at, event.sequence);
  at = putText(scratch, at, eventId);
  if (key === null) bytes[at++] = 0;
  else {
    bytes[at++] = 1;
    at = putText(scratch, at, key);
  }
  at = putText(scratch, at, record);
  bytes.set(event.root, at);
  at += 32;
  at = putInteger(scratch, at, event.writtenAt);
  return hash.sha256(bytes.subarray(0, at));
}

/** A safe integer as 8 bytes, big-endian, two's complement. */
function putInteger({ view }: Scratch, at: number, value: number): number {
  const high = Math.floor(value / 0x1_0000_0000);
  view.setInt32(at, high);
  view.setUint32(at + 4, value - high * 0x1_0000_0000);
  return at + 8;
}

/** A text as its UTF-8 bytes after their 4-byte big-endian length. */
function putText({ bytes, view }: Scratch, at: number, text: string): number {
  const { written } = encoder.encodeInto(text, bytes.subarray(at + 4));
  view.setUint32(at, written);
  return at + 4 + written;
}

const DIGEST_AT = "SELECT digest FROM journal WHERE sequence = ?";
const NEWEST_DIGEST = "SELECT digest FROM journal ORDER BY sequence DESC LIMIT 1";
const ANCHOR = "SELECT sequence, digest FROM journal_anchor WHERE singleton = 1";

/** Where the oldest event kept chains from, when not from GENESIS_DIGEST at event 1. */
export interface Anchor {
  /** The oldest event kept. */
  readonly sequence: number;
  /** The digest it chains from. */
  readonly digest: Uint8Array;
}

/** The journal's anchor row, if it has one. */
export async function readAnchor(executor: Executor): Promise<Anchor | undefined> {
  return anchorOf((await executor.execute(ANCHOR)).rows[0]);
}

/**
 * The digest the next event chains from when the journal has no event: the
 * anchor's (a fork's target before its first event), else GENESIS_DIGEST.
 */
export async function firstLink(executor: Executor): Promise<Uint8Array> {
  return (await readAnchor(executor))?.digest ?? GENESIS_DIGEST;
}

/** `firstLink`, read before this returns where the scope runs statements now; else undefined, nothing read. */
export function firstLinkNow(scope: WriteScope): Uint8Array | undefined {
  const read = scope.executeNow(ANCHOR, []);
  return read === undefined ? undefined : (anchorOf(read.rows[0])?.digest ?? GENESIS_DIGEST);
}

function anchorOf(row: Row | undefined): Anchor | undefined {
  return row === undefined
    ? undefined
    : { sequence: Number(row.sequence), digest: row.digest as Uint8Array };
}

/**
 * The digest of event `sequence`, or of the newest event when none is named;
 * for a journal with no event, the one its first event chains from.
 * Undefined when the event named is not stored.
 */
export async function digestOf(
  executor: Executor,
  sequence?: number,
): Promise<Uint8Array | undefined> {
  const row = (
    await (sequence === undefined
      ? executor.execute(NEWEST_DIGEST)
      : executor.execute(DIGEST_AT, [sequence]))
  ).rows[0];
  if (row !== undefined) return row.digest as Uint8Array;
  return sequence === undefined ? firstLink(executor) : undefined;
}

/** Setting the anchor: the oldest event kept is `sequence`, chaining from `digest`. */
export const SET_ANCHOR = `INSERT INTO journal_anchor (singleton, sequence, digest) VALUES (1, ?, ?)
ON CONFLICT (singleton) DO UPDATE SET sequence = excluded.sequence, digest = excluded.digest`;

const CHAIN_PAGE = `SELECT sequence, event_id, idempotency_key, record, root_id, written_at, digest
FROM journal WHERE sequence > ? ORDER BY sequence LIMIT ?`;

/**
 * Re-hashes the chain, oldest event first: each event's digest must be that
 * of its fields and the digest stored before it (for the oldest event kept,
 * the anchor's, or the genesis digest at event 1). Reports the first broken
 * link by its sequence, and how many more links break after it: a changed
 * event breaks its own link, two events swapped break three.
 */
export async function checkChain(
  reader: Executor,
  hash: HashFunctions,
  problems: string[],
): Promise<void> {
  const anchor = await readAnchor(reader);
  let previous = anchor?.digest ?? GENESIS_DIGEST;
  let expected: number | undefined = anchor?.sequence ?? 1;
  let first: string | undefined;
  let more = 0;
  const rows = keysetRows({
    start: 0,
    page: async (after: number, limit: number) =>
      (await reader.execute(CHAIN_PAGE, [after, limit])).rows,
    keyOf: (row) => Number(row.sequence),
    limit: 500,
  });
  for await (const row of rows) {
    const sequence = Number(row.sequence);
    if (expected !== undefined && sequence !== expected) {
      problems.push(
        anchor === undefined
          ? `journal: the oldest event is ${sequence}, and no anchor says where it chains from (a run starts at 1)`
          : `journal: the anchor names event ${anchor.sequence} as the oldest, but the oldest is ${sequence}`,
      );
    }
    expected = undefined;
    const stored = row.digest;
    const broken = !linkHolds(hash, previous, row);
    if (broken && first === undefined)
      first = `journal: the digest chain breaks at event ${sequence}: its digest is not that of its fields and of the digest before it`;
    else if (broken) more++;
    previous = stored instanceof Uint8Array ? stored : GENESIS_DIGEST;
  }
  if (first !== undefined) {
    problems.push(
      more === 0 ? first : `${first} (and ${more} more ${more === 1 ? "link" : "links"} after it)`,
    );
  }
}

/** True when the row's digest is that of its fields chained from `previous`. */
function linkHolds(hash: HashFunctions, previous: Uint8Array, row: Row): boolean {
  const { event_id: eventId, idempotency_key: key, record, root_id: root, digest } = row;
  if (
    typeof eventId !== "string" ||
    (key !== null && typeof key !== "string") ||
    typeof record !== "string" ||
    !(root instanceof Uint8Array) ||
    root.length !== 32 ||
    !(digest instanceof Uint8Array)
  ) {
    return false;
  }
  const event = {
    sequence: Number(row.sequence),
    eventId,
    key,
    record,
    root,
    writtenAt: Number(row.written_at),
  };
  return sameBytes(eventDigest(hash, previous, event), digest);
}
