/**
 * The deep check, O(data) and explicit (opening never does this). It proves
 * what opening cannot afford to: SQLite's own integrity_check and
 * foreign_key_check; every CHECK constraint of the schema, row by row, on
 * any connection (integrity_check skips them read-only: ../schema/checks.ts);
 * a gap-free journal whose event ids are unique and whose digest chain holds
 * (./chain.ts); every object re-hashed — a file's
 * content (a large one piece by piece, each piece's address re-derived from
 * the running hash) and every directory node's bytes (a node stored as a
 * delta rebuilt through its chain first); and, from every root
 * the run retains, every reference resolved: each node present, well-formed,
 * in its canonical encoding and canonically cut (so a root id still says
 * exactly what the workspace holds), each file present (an inline file's
 * content re-hashed against the digest its entry records), each directory
 * held in its entry exactly when it is small (its bytes re-hashed likewise),
 * each root a journal event holds re-hashed against the id it records.
 */
import { sameBytes, toHex } from "../port/bytes.js";
import type { Executor } from "../port/driver.js";
import type { HashFunctions } from "../port/hash.js";
import { checkViolations } from "../schema/checks.js";
import { HAS_OBJECT, READ_CHUNK } from "../workspace/files.js";
import { objectRows, retainedRoots } from "../workspace/gc.js";
import { idKey } from "../workspace/id-key.js";
import {
  compareNames,
  type DirectoryNode,
  decodeNode,
  EMPTY_ROOT_ID_BYTES,
  INLINE_NODE_MAX,
  type Item,
  isCut,
  MAX_NODE_ENTRIES,
  nodeBytes,
} from "../workspace/node.js";
import { readNodeBytes } from "../workspace/node-bytes.js";
import { objectKey } from "../workspace/object-key.js";
import { BYTES, DELTA } from "../workspace/object-rows.js";
import { RebuiltNodes } from "../workspace/rebuilt-nodes.js";
import { checkChain } from "./chain.js";
import { SCHEMA_V1 } from "./schema-v1.js";

/**
 * Ids stored more than once (only a writer that bypassed the schema's
 * trigger can do that). The key index is walked in order, so only prefixes
 * seen twice — none in a healthy file — are looked at row by row.
 */
const REPEATED_IDS = `SELECT lower(hex(id)) AS id, count(*) AS n FROM workspace_object
WHERE substr(id, 1, 8) IN (
  SELECT substr(id, 1, 8) FROM workspace_object GROUP BY substr(id, 1, 8) HAVING count(*) > 1)
GROUP BY id HAVING count(*) > 1 ORDER BY id`;
/** Each root an event holds, once per distinct bytes held for it. */
const HELD_ROOTS = "SELECT DISTINCT root_id, root_node FROM journal WHERE root_node IS NOT NULL";
/**
 * Event ids used twice. Core makes each unique by construction, so the
 * schema keeps no index on them (a step would pay a page a commit for it);
 * only a writer that bypassed core can repeat one, and this finds it.
 */
/** integrity_check's line for a row that breaks a CHECK (only a writable connection checks them). */
const CHECK_VERDICT = /^CHECK constraint failed in /;
const REPEATED_EVENT_IDS = `SELECT event_id, count(*) AS n FROM journal
GROUP BY event_id HAVING count(*) > 1 ORDER BY event_id`;

export interface VerifyReport {
  readonly ok: boolean;
  /** One line per problem found; empty when ok. */
  readonly problems: string[];
  readonly counts: {
    readonly events: number;
    /** Objects re-hashed: directory nodes and files. */
    readonly objects: number;
    /** Pieces of large files re-hashed. */
    readonly chunks: number;
    /** Distinct roots retained (journal and pins). */
    readonly roots: number;
  };
}

/**
 * Told how far verify is, often: `"bytes"` while it re-hashes the stored
 * objects (done and total in bytes, moving inside a large file too), then
 * `"roots"` while it walks the retained roots (done and total in roots).
 */
export type VerifyProgress = (step: string, done: number, total: number) => void;

export async function verifyRun(
  reader: Executor,
  hash: HashFunctions,
  progress?: VerifyProgress,
): Promise<VerifyReport> {
  const problems: string[] = [];
  const integrity = await reader.execute("PRAGMA integrity_check");
  // Its CHECK lines (a writable connection's only) are left to the scan below, which finds
  // each row, on every connection: so a report reads the same read-only and read-write.
  const verdicts = integrity.rows
    .map((row) => String(Object.values(row)[0]))
    .filter((line) => !CHECK_VERDICT.test(line));
  if (verdicts.length > 1 || (verdicts.length === 1 && verdicts[0] !== "ok")) {
    problems.push(...verdicts.map((line) => `integrity_check: ${line}`));
  }
  problems.push(...(await checkViolations(reader, SCHEMA_V1)));
  const foreign = await reader.execute("PRAGMA foreign_key_check");
  for (const row of foreign.rows) {
    problems.push(
      `foreign_key_check: ${String(row.table)} row ${String(row.rowid)} → ${String(row.parent)}`,
    );
  }

  const journal = (
    await reader.execute(
      "SELECT count(*) AS n, min(sequence) AS lo, max(sequence) AS hi FROM journal",
    )
  ).rows[0]!;
  const events = Number(journal.n);
  if (events > 0 && Number(journal.hi) - Number(journal.lo) + 1 !== events) {
    problems.push(
      `journal: ${events} events between ${journal.lo} and ${journal.hi}: the sequence has gaps`,
    );
  }
  for (const row of (await reader.execute(REPEATED_EVENT_IDS)).rows) {
    problems.push(
      `journal: event id ${String(row.event_id)} is used by ${String(row.n)} events (an event id is unique)`,
    );
  }
  await checkChain(reader, hash, problems);

  // Every object's content against its address; progress in bytes, so a large file moves it too.
  const totalBytes = Number(
    (await reader.execute("SELECT coalesce(sum(size), 0) AS bytes FROM workspace_object")).rows[0]!
      .bytes,
  );
  let bytes = 0;
  let objects = 0;
  let chunks = 0;
  // Each delta usually lies onto the row before it: rebuilt once, not once per chain it ends.
  const rebuilt = new RebuiltNodes();
  for await (const row of objectRows(reader)) {
    progress?.("bytes", bytes, totalBytes);
    const start = bytes;
    objects++;
    bytes += Number(row.size);
    const id = row.id as Uint8Array;
    const data = row.data as Uint8Array;
    const kind = Number(row.kind);
    if (kind === BYTES) {
      if (!sameBytes(hash.sha256(data), id)) {
        problems.push(`object ${toHex(id)}: its bytes do not hash to its id`);
      }
      continue;
    }
    if (kind === DELTA) {
      const stored = await readNodeBytes(reader, id, rebuilt);
      if (stored.bytes === undefined) {
        problems.push(`node ${toHex(id)}: ${stored.damage ?? "missing"}`);
      } else if (!sameBytes(hash.sha256(stored.bytes), id)) {
        problems.push(`node ${toHex(id)}: its delta does not rebuild the bytes of its id`);
      }
      continue;
    }
    chunks += await checkLargeFile(reader, hash, id, Number(row.size), data, problems, (done) =>
      progress?.("bytes", start + done, totalBytes),
    );
  }
  progress?.("bytes", bytes, totalBytes);
  for (const row of (await reader.execute(REPEATED_IDS)).rows) {
    problems.push(`object ${String(row.id)}: stored ${String(row.n)} times (an id is stored once)`);
  }

  // Every retained root's nodes: present, well-formed, canonical.
  // Oldest first: consecutive roots rebuild their chains from one another.
  const roots = await retainedRoots(reader);
  progress?.("roots", 0, roots.length);
  const checked = new Set<string>();
  const files = new Set<string>();
  // `entry`: a directory's top named by an entry (a root is not), which is
  // a row only when too large to be held in the entry; `held`: the entry
  // holding it, whose bytes are checked in place of a row's.
  const pending: Place[] = [
    { id: EMPTY_ROOT_ID_BYTES, last: true, top: true },
    ...roots.map(({ id, node }) => ({ id, last: true, top: true, journal: node })),
  ];
  // Every root an event holds, whichever event: its bytes are the root's.
  for (const row of (await reader.execute(HELD_ROOTS)).rows) {
    const id = row.root_id as Uint8Array;
    if (!sameBytes(hash.sha256(row.root_node as Uint8Array), id)) {
      problems.push(`root ${toHex(id)}: held in the journal, its bytes do not hash to its id`);
    }
  }
  while (pending.length > 0) {
    const { id, last, top, entry, held, journal } = pending.pop()!;
    // A stored node is checked once per place it can stand in; a held one is
    // part of its parent's row and is checked with each parent.
    if (held === undefined) {
      const key = `${toHex(id)}:${last}:${top}:${entry === true}`;
      if (checked.has(key)) continue;
      checked.add(key);
    }
    const node =
      held !== undefined
        ? checkHeld(held, hash, problems)
        : journal !== undefined
          ? checkJournalRoot(id, journal, problems)
          : await loadNode(reader, id, problems, rebuilt, entry === true);
    if (node === undefined) continue;
    checkNode(node, { last, top }, problems);
    for (const [i, item] of node.items.entries()) {
      if (item.kind === "directory") {
        pending.push({
          id: item.target,
          last: true,
          top: true,
          entry: true,
          held: item.node && item,
        });
      } else if (item.kind === "node") {
        pending.push({ id: item.target, last: last && i === node.items.length - 1, top: false });
      } else if (item.content !== undefined) {
        if (!sameBytes(hash.sha256(item.content), item.target)) {
          problems.push(
            `file ${toHex(item.target)}: its inline content does not hash to its digest`,
          );
        }
      } else if (!files.has(idKey(item.target))) {
        files.add(idKey(item.target));
        const found = await reader.execute(HAS_OBJECT, objectKey(item.target));
        if (found.rows.length === 0) problems.push(`file ${toHex(item.target)}: missing`);
      }
    }
  }
  progress?.("roots", roots.length, roots.length);

  return {
    ok: problems.length === 0,
    problems,
    counts: { events, objects, chunks, roots: roots.length },
  };
}

/** A large file: its pieces in order, each present and at the address the running hash gives. */
async function checkLargeFile(
  reader: Executor,
  hash: HashFunctions,
  id: Uint8Array,
  size: number,
  list: Uint8Array,
  problems: string[],
  read?: (bytes: number) => void,
): Promise<number> {
  const running = hash.createSha256();
  let stored = 0;
  let pieces = 0;
  for (let at = 0; at < list.length; at += 32) {
    const key = list.subarray(at, at + 32);
    const row = (await reader.execute(READ_CHUNK, [key])).rows[0];
    if (row === undefined) {
      problems.push(`file ${toHex(id)}: piece ${at / 32} is missing`);
      return pieces;
    }
    const data = row.data as Uint8Array;
    running.update(data);
    stored += data.length;
    pieces++;
    read?.(stored);
    if (toHex(running.copy().digest()) !== toHex(key)) {
      problems.push(`file ${toHex(id)}: piece ${at / 32} is not at the address its bytes give`);
      return pieces;
    }
  }
  if (stored !== size) problems.push(`file ${toHex(id)}: ${stored} bytes stored, ${size} recorded`);
  else if (toHex(running.digest()) !== toHex(id)) {
    problems.push(`file ${toHex(id)}: content does not hash to its digest`);
  }
  return pieces;
}

/** Where a node is reached from, and so what it must look like (see the walk above). */
interface Place {
  readonly id: Uint8Array;
  readonly last: boolean;
  readonly top: boolean;
  readonly entry?: boolean;
  readonly held?: Item | undefined;
  /** A root its journal events hold: those bytes (hashed against the id with every event's). */
  readonly journal?: Uint8Array | undefined;
}

/** A directory's top held in its entry: its bytes hash to the id the entry names and are canonical. */
function checkHeld(item: Item, hash: HashFunctions, problems: string[]): DirectoryNode | undefined {
  const bytes = item.content!;
  const node = item.node!;
  if (!sameBytes(hash.sha256(bytes), item.target)) {
    problems.push(`node ${toHex(item.target)}: held in its entry, its bytes do not hash to its id`);
    return undefined;
  }
  if (!sameBytes(nodeBytes(node.level, node.items).bytes, bytes)) {
    problems.push(`node ${toHex(item.target)}: not in the canonical encoding`);
  }
  return node;
}

/** A root held in the journal: well-formed and canonical (its hash is checked per event above). */
function checkJournalRoot(
  id: Uint8Array,
  bytes: Uint8Array,
  problems: string[],
): DirectoryNode | undefined {
  const node = decodeNode(id, bytes);
  if (node === undefined) {
    problems.push(`root ${toHex(id)}: held in the journal, not a well-formed directory node`);
    return undefined;
  }
  if (!sameBytes(nodeBytes(node.level, node.items).bytes, bytes)) {
    problems.push(`root ${toHex(id)}: not in the canonical encoding`);
  }
  return node;
}

async function loadNode(
  reader: Executor,
  id: Uint8Array,
  problems: string[],
  rebuilt: RebuiltNodes,
  entry = false,
): Promise<DirectoryNode | undefined> {
  const stored = await readNodeBytes(reader, id, rebuilt);
  if (stored.missing) {
    problems.push(`node ${toHex(id)}: missing`);
    return undefined;
  }
  const node = stored.bytes === undefined ? undefined : decodeNode(id, stored.bytes);
  if (node === undefined || stored.bytes === undefined) {
    problems.push(`node ${toHex(id)}: not a well-formed directory node`);
    return undefined;
  }
  if (!sameBytes(nodeBytes(node.level, node.items).bytes, stored.bytes)) {
    problems.push(`node ${toHex(id)}: not in the canonical encoding`);
  }
  if (entry && stored.bytes.length <= INLINE_NODE_MAX) {
    problems.push(
      `node ${toHex(id)}: a directory's top of ${stored.bytes.length} bytes stored apart ` +
        `(at most ${INLINE_NODE_MAX} is held in its entry; not canonical)`,
    );
  }
  return node;
}

/**
 * The cut rule, checked node by node: no entry before the last ends a node,
 * and the last does unless the node is the last of its level. Names ascend
 * strictly. A top above level 0 has at least two entries.
 */
function checkNode(
  node: DirectoryNode,
  place: { last: boolean; top: boolean },
  problems: string[],
): void {
  const where = `node ${toHex(node.id)}`;
  const { items, level } = node;
  for (let i = 1; i < items.length; i++) {
    if (compareNames(items[i - 1]!.name, items[i]!.name) >= 0) {
      problems.push(`${where}: names out of order`);
      return;
    }
  }
  for (let i = 0; i < items.length - 1; i++) {
    if (isCut(level, items[i]!.name) || i + 1 >= MAX_NODE_ENTRIES) {
      problems.push(`${where}: cut in the wrong place (not canonical)`);
      return;
    }
  }
  const tail = items.at(-1);
  if (
    !place.last &&
    tail !== undefined &&
    !isCut(level, tail.name) &&
    items.length < MAX_NODE_ENTRIES
  ) {
    problems.push(`${where}: ends where no cut is (not canonical)`);
  }
  if (place.top && level > 0 && items.length < 2) {
    problems.push(`${where}: a directory's top with a single child (not canonical)`);
  }
  if (!place.top && items.length === 0) problems.push(`${where}: an empty inner node`);
}
