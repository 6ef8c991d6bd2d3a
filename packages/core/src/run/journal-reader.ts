/**
 * Reads of the journal, the run's append-only event log: an event by its
 * idempotency key, or a range in sequence order, oldest or newest first,
 * filtered by a key prefix; and the rules every read and append checks a
 * key and a stored row against.
 */
import { toHex } from "../port/bytes.js";
import { RunledgerError } from "../port/errors.js";
import type { JsonObject } from "../port/json.js";
import { keysetRows } from "../port/keyset.js";
import { checkNames } from "../port/options.js";
import { placeholders } from "../port/placeholders.js";
import { prefixCondition } from "../port/prefix-range.js";
import { isWellFormed } from "../port/text.js";
import type { Row } from "../port/values.js";
import type { CallbackScope } from "../transaction/scope.js";
import type { JournalEvent } from "./types.js";

const SELECT_EVENT = `SELECT sequence, event_id, idempotency_key, record, root_id, written_at FROM journal`;

const GET = `${SELECT_EVENT} WHERE idempotency_key = ?`;

/** The options `list` and `stream` share. */
const READ_OPTIONS = ["after", "before", "order", "keyPrefix"] as const;

/**
 * LIST statements built so far, by order and prefix shape (at most six): the
 * same text for every reader, so kept once for all — a journal writer (a
 * reader too) is made for every step's apply.
 */
const LISTS = new Map<string, string>();

/**
 * Reads of the journal: by key, or a range in sequence order, oldest or
 * newest first. Each call that answers a promise is an operation of the
 * snapshot or transaction that handed out this reader: its callback must
 * await it.
 */
export class JournalReader {
  /** @internal */
  protected readonly executor: CallbackScope;

  constructor(scope: CallbackScope) {
    this.executor = scope;
  }

  /** The event written under idempotency key `key`, or undefined: one lookup in the key index. */
  get(key: string): Promise<JournalEvent | undefined> {
    return this.executor.track(this.#get(key));
  }

  async #get(key: string): Promise<JournalEvent | undefined> {
    checkKey(key, "journal.get's key");
    const row = (await this.executor.execute(GET, [key])).rows[0];
    return row === undefined ? undefined : toEvent(row);
  }

  /**
   * Events strictly between `after` (default 0) and `before` (default none),
   * at most `limit` (default 1000, at least 1), oldest first or — with
   * `order: "desc"` — newest first; with `keyPrefix`, only events whose
   * idempotency key starts with it. The last event of a page is the cursor of
   * the next: `after` its sequence going up, `before` going down.
   */
  list(options: JournalListOptions = {}): Promise<JournalEvent[]> {
    return this.executor.track(this.#list(options));
  }

  async #list(options: JournalListOptions): Promise<JournalEvent[]> {
    checkNames(options, [...READ_OPTIONS, "limit"], "journal.list's options");
    const range = readRange(options, "journal.list");
    const limit = options.limit ?? 1000;
    if (!Number.isSafeInteger(limit) || limit < 1) {
      throw new RunledgerError(
        "invalid_argument",
        `journal.list's limit is a whole number of at least 1; got ${String(limit)}`,
      );
    }
    return (await this.#page(range, limit)).map(toEvent);
  }

  /**
   * Every event `list` would return with the same options and no limit,
   * fetched `pageSize` (default 500) at a time so a long journal never sits
   * whole in memory. Each row becomes an event as it is yielded: the events
   * before a damaged one are read before it fails.
   */
  async *stream(options: JournalStreamOptions = {}): AsyncGenerator<JournalEvent> {
    checkNames(options, [...READ_OPTIONS, "pageSize"], "journal.stream's options");
    const range = readRange(options, "journal.stream");
    const descending = range.order === "desc";
    const rows = keysetRows({
      start: descending ? range.before : range.after,
      page: (cursor, limit) =>
        this.#page(descending ? { ...range, before: cursor } : { ...range, after: cursor }, limit),
      keyOf: (row) => Number(row.sequence),
      limit: options.pageSize ?? 500,
    });
    for await (const row of rows) yield toEvent(row);
  }

  /**
   * One page of a range. A page filtered by a key prefix is planned by how
   * many keys share the prefix, since neither of SQLite's two plans is good
   * for both: walking sequences (the primary key) in the page's order reads
   * every event between the cursor and the matches (a prefix whose events
   * are few and far from the cursor costs the whole journal), and reading
   * the key index reads and sorts every match (a prefix half the journal
   * shares costs half the journal). So the key index is asked first for at
   * most FEW_KEYS + 1 matches, covering (sequences only): when there are no
   * more than FEW_KEYS, those are the matches, and the page is read by
   * their sequences; when there are more, the prefix is common, and walking
   * sequences finds the page's events soon.
   */
  async #page(range: ReadRange, limit: number): Promise<Row[]> {
    const prefix =
      range.keyPrefix === undefined
        ? undefined
        : prefixCondition("idempotency_key", range.keyPrefix);
    if (prefix !== undefined) {
      const probe = await this.executor.execute(
        `SELECT sequence FROM journal WHERE ${prefix.sql} LIMIT ${FEW_KEYS + 1}`,
        prefix.params,
      );
      if (probe.rows.length <= FEW_KEYS) {
        return this.#bySequence(range, limit, probe.rows);
      }
    }
    const shape = `${range.order}:${prefix?.params.length ?? 0}`;
    let sql = LISTS.get(shape);
    if (sql === undefined) {
      const where = ["sequence > ?", "sequence < ?", ...(prefix === undefined ? [] : [prefix.sql])];
      sql = `${SELECT_EVENT} WHERE ${where.join(" AND ")} ORDER BY sequence ${range.order.toUpperCase()} LIMIT ?`;
      LISTS.set(shape, sql);
    }
    const params = [range.after, range.before, ...(prefix?.params ?? []), limit];
    return (await this.executor.execute(sql, params)).rows;
  }

  /** The page among `matches` (rows of sequences, any order): in range, in order, at most `limit`. */
  async #bySequence(range: ReadRange, limit: number, matches: readonly Row[]): Promise<Row[]> {
    const sequences = matches
      .map((row) => Number(row.sequence))
      .filter((sequence) => sequence > range.after && sequence < range.before)
      .sort(range.order === "asc" ? (a, b) => a - b : (a, b) => b - a)
      .slice(0, limit);
    if (sequences.length === 0) return [];
    const { rows } = await this.executor.execute(
      `${SELECT_EVENT} WHERE sequence IN ${placeholders(1, sequences.length)} ORDER BY sequence ${range.order.toUpperCase()}`,
      sequences,
    );
    return rows;
  }
}

/** At most how many matches of a key prefix are read through the key index (see #page). */
const FEW_KEYS = 64;

/** What `journal.list` takes. */
export interface JournalListOptions {
  /** Only events with a greater sequence (exclusive). Default 0. */
  readonly after?: number;
  /** Only events with a smaller sequence (exclusive). Default: no bound. */
  readonly before?: number;
  /** At most this many events, at least 1. Default 1000. */
  readonly limit?: number;
  /** "asc" (default): oldest first; "desc": newest first. */
  readonly order?: "asc" | "desc";
  /** Only events whose idempotency key starts with this text (exact for any Unicode). */
  readonly keyPrefix?: string;
}

/** What `journal.stream` takes: `list`'s options, with a page size instead of a limit. */
export interface JournalStreamOptions extends Omit<JournalListOptions, "limit"> {
  /** Events fetched per statement, at least 1. Default 500. */
  readonly pageSize?: number;
}

/** A read's bounds, checked: the sequences strictly between after and before. */
interface ReadRange {
  readonly after: number;
  readonly before: number;
  readonly order: "asc" | "desc";
  readonly keyPrefix: string | undefined;
}

/** Above every sequence a journal can hold (sequences are safe integers). */
const NO_UPPER_BOUND = Number.MAX_SAFE_INTEGER;

function readRange(options: Omit<JournalListOptions, "limit">, where: string): ReadRange {
  const { after = 0, before = NO_UPPER_BOUND, order = "asc", keyPrefix } = options;
  if (!Number.isSafeInteger(after) || after < 0) {
    throw new RunledgerError(
      "invalid_argument",
      `${where}'s after is a sequence, a whole number >= 0; got ${String(after)}`,
    );
  }
  if (!Number.isSafeInteger(before) || before < 1) {
    throw new RunledgerError(
      "invalid_argument",
      `${where}'s before is a sequence, a whole number >= 1; got ${String(before)}`,
    );
  }
  if (order !== "asc" && order !== "desc") {
    throw new RunledgerError(
      "invalid_argument",
      `${where}'s order is "asc" or "desc"; got ${JSON.stringify(order)}`,
    );
  }
  if (keyPrefix !== undefined) checkKey(keyPrefix, `${where}'s keyPrefix`, 0);
  return { after, before, order, keyPrefix };
}

/** An idempotency key (or a prefix of one): well-formed text of at most 512 characters. */
export function checkKey(key: unknown, what: string, shortest = 1): asserts key is string {
  if (
    typeof key !== "string" ||
    key.length < shortest ||
    key.length > MAX_KEY_LENGTH ||
    !isWellFormed(key)
  ) {
    throw new RunledgerError(
      "invalid_argument",
      `${what} is well-formed text of ${shortest} to ${MAX_KEY_LENGTH} characters`,
    );
  }
}

/** The longest idempotency key the schema stores (journal.idempotency_key's CHECK). */
const MAX_KEY_LENGTH = 512;

/**
 * A stored row as an event. A row a damaged file breaks — a record that is
 * no longer JSON, a field of another type — is `corrupt`, naming the event's
 * sequence, never a raw parse error.
 */
export function toEvent(row: Row): JournalEvent {
  const sequence = Number(row.sequence);
  const { event_id: eventId, idempotency_key: key, record, root_id: root } = row;
  const writtenAt = row.written_at;
  let parsed: unknown;
  try {
    parsed = typeof record === "string" ? JSON.parse(record) : undefined;
  } catch (error) {
    throw damagedEvent(sequence, "its record is not valid JSON", error);
  }
  if (typeof parsed !== "object" || parsed === null || Array.isArray(parsed)) {
    throw damagedEvent(sequence, "its record is not a JSON object");
  }
  if (
    typeof eventId !== "string" ||
    (key !== null && typeof key !== "string") ||
    !isRootId(root) ||
    (typeof writtenAt !== "number" && typeof writtenAt !== "bigint")
  ) {
    throw damagedEvent(sequence, "its row does not have the shape of an event");
  }
  return {
    sequence,
    eventId,
    key,
    record: parsed as JsonObject,
    rootId: toHex(root),
    writtenAt: Number(writtenAt),
  };
}

export function isJsonText(value: unknown): boolean {
  if (typeof value !== "string") return false;
  try {
    JSON.parse(value);
    return true;
  } catch {
    return false;
  }
}

export function isRootId(value: unknown): value is Uint8Array {
  return value instanceof Uint8Array && value.length === 32;
}

/** A journal event a damaged file no longer holds whole. */
export function damagedEvent(sequence: number, what: string, cause?: unknown): RunledgerError {
  return new RunledgerError(
    "corrupt",
    `journal event ${sequence} is damaged: ${what}; run verify, then restore the file from a copy`,
    { details: { sequence }, ...(cause === undefined ? {} : { cause }) },
  );
}
