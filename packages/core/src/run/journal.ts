/**
 * The journal: the run's append-only event log, its reads and its appends
 * (idempotency keys, gap-free sequences, the workspace root each event
 * records).
 */
import { toHex } from "../port/bytes.js";
import { isRunledgerError, RunledgerError } from "../port/errors.js";
import { type JsonObject, toJsonText } from "../port/json.js";
import { keysetRows } from "../port/keyset.js";
import { checkNames } from "../port/options.js";
import { placeholders } from "../port/placeholders.js";
import { prefixCondition } from "../port/prefix-range.js";
import { isWellFormed } from "../port/text.js";
import type { Row } from "../port/values.js";
import type { CallbackScope, WriteScope } from "../transaction/scope.js";
import type { RootBase } from "../workspace/publish.js";
import { readHead } from "../workspace/roots.js";
import { eventDigest, firstLink } from "./chain.js";
import { isLifecycleRefusal, lifecycleRefusal } from "./lifecycle.js";
import type { AppendResult, JournalEvent, RunContext, RunStatus } from "./types.js";

const SELECT_EVENT = `SELECT sequence, event_id, idempotency_key, record, root_id, written_at FROM journal`;

// The next row with every value bound — its digest too, computed from the
// event before it (./chain.ts) — written only while that event, `base`, is
// still the newest: the sequence, root and digest of the newest event, as a
// lease last saw them (RootHint), or as read under the write lock (a first
// append on a lease, an apply that could not use the guess). SQLite checks
// the sequence itself: the journal_gap_free trigger refuses one that is not
// max + 1; and the base's digest, which covers its root, must be the one
// stored. So a stale guess (another lease or process appended or moved the
// root, or a rollback undid this lease's own work) writes nothing: no row
// when the event at that sequence is another, a refusal when the sequence
// moved on. The row's root is the guessed one for an append, and the new
// root for an apply: publishing a root is this one row. Its node is the one
// given (an apply's new root, when small enough to be held), else the base
// event's when the root is the same (an append). Before the first event, the
// base is sequence 0 with the digest the first event chains from, and no row
// is looked for.
const APPEND_AFTER = `INSERT INTO journal (sequence, event_id, idempotency_key, record, root_id, root_node, written_at, digest)
SELECT ?, ?, ?, ?, ?, coalesce(?, (SELECT root_node FROM journal WHERE sequence = ? AND root_id = ?)), ?, ?
WHERE coalesce((SELECT digest FROM journal WHERE sequence = ?), ?) = ?`;

const BY_KEY = `SELECT sequence, event_id, record, root_id FROM journal WHERE idempotency_key = ?`;

const GET = `${SELECT_EVENT} WHERE idempotency_key = ?`;

/** The options `list` and `stream` share. */
const READ_OPTIONS = ["after", "before", "order", "keyPrefix"] as const;

/**
 * Reads of the journal: by key, or a range in sequence order, oldest or
 * newest first. Each call that answers a promise is an operation of the
 * scope (scope.ts): the callback must await it.
 */
export class JournalReader {
  protected readonly executor: CallbackScope;
  /** LIST statements built so far, by order and prefix shape (at most six). */
  readonly #lists = new Map<string, string>();

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
    let sql = this.#lists.get(shape);
    if (sql === undefined) {
      const where = ["sequence > ?", "sequence < ?", ...(prefix === undefined ? [] : [prefix.sql])];
      sql = `${SELECT_EVENT} WHERE ${where.join(" AND ")} ORDER BY sequence ${range.order.toUpperCase()} LIMIT ?`;
      this.#lists.set(shape, sql);
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
 * Appends to the journal inside the caller's transaction: the next gap-free
 * sequence, a unique event id, and the workspace root current at that
 * moment. With a key, a retried append returns the first event instead of
 * writing a second one.
 */
export class JournalWriter extends JournalReader {
  readonly #scope: WriteScope;
  readonly #context: RunContext;
  readonly #hint: RootHint;

  constructor(scope: WriteScope, context: RunContext, hint: RootHint = { root: undefined }) {
    super(scope);
    this.#scope = scope;
    this.#context = context;
    this.#hint = hint;
  }

  append(record: JsonObject, options: { key?: string } = {}): Promise<AppendResult> {
    return this.#scope.track(this.#append(record, options));
  }

  #append(record: JsonObject, options: { key?: string }): Promise<AppendResult> {
    // Not async: a keyless append is one statement, and this is the hot path.
    try {
      checkNames(options, ["key"], "append's options");
      const key = options.key;
      const text = journalText(record);
      if (key === undefined) return this.#insert(text, null);
      checkKey(key, "an idempotency key");
      return this.#appendKeyed(text, key);
    } catch (error) {
      return Promise.reject(error);
    }
  }

  /**
   * With a key: a new event, or the first event under it. Written first and
   * read only when the key index refuses the row (one statement for a new
   * key, the common case); the refused statement wrote nothing and the
   * transaction goes on.
   */
  async #appendKeyed(text: string, key: string): Promise<AppendResult> {
    let refusal: unknown;
    try {
      return await this.#insert(text, key);
    } catch (error) {
      // The key index refused the row; or the lifecycle did, which a retry of
      // an append that landed before the run stopped does not hear: it gets that event.
      const lifecycle = isRunledgerError(error) && LIFECYCLE_REFUSALS.has(error.code);
      if (!(error instanceof KeyTaken || lifecycle)) throw error;
      refusal = error;
    }
    const first = (await this.executor.execute(BY_KEY, [key])).rows[0];
    if (first === undefined) {
      // The index refused the key, so a row holds it: none found means the index and the table disagree.
      if (refusal instanceof KeyTaken) throw this.#scope.doom(storageFailure());
      throw refusal;
    }
    if (first.record !== text) {
      // A stored record that no longer parses was damaged, not written with another record.
      if (!isJsonText(first.record)) {
        throw damagedEvent(Number(first.sequence), "its record is not valid JSON");
      }
      throw new RunledgerError(
        "idempotency_conflict",
        `the key ${JSON.stringify(key)} already names event ${first.sequence} with a different ` +
          "record; use a new key for a new event",
        { details: { sequence: first.sequence } },
      );
    }
    const sequence = Number(first.sequence);
    if (typeof first.event_id !== "string" || !isRootId(first.root_id)) {
      throw damagedEvent(sequence, "its row does not have the shape of an event");
    }
    return { sequence, eventId: first.event_id, rootId: toHex(first.root_id) };
  }

  /**
   * Appends a record already serialized by `journalText`, with no key (a
   * resume's own event).
   * @internal
   */
  appendText(text: string): Promise<AppendResult> {
    return this.#insert(text, null);
  }

  /** The lease's guess of the newest event, or undefined when it has none. */
  guess(): Head | undefined {
    const { root, sequence, digest } = this.#hint;
    return root === undefined || sequence === undefined || digest === undefined
      ? undefined
      : { root, sequence, digest };
  }

  /**
   * The newest event, read (exact under the write lock), with the digest the
   * next event chains from: the newest event's, or before the first event
   * the anchor's or the genesis digest.
   */
  async head(): Promise<Head> {
    const head = await readHead(this.executor);
    return head.digest !== undefined ? head : { ...head, digest: await firstLink(this.executor) };
  }

  /**
   * Publishes a new workspace root: the event after `base` (the newest event
   * the root was computed from), at `root`, holding `rootNode` (the root's
   * bytes) when given. Undefined, with nothing written, when `base` is no
   * longer the newest event.
   * @internal
   */
  async publish(
    text: string,
    base: Head,
    root: Uint8Array,
    rootNode?: Uint8Array,
    key?: string,
  ): Promise<AppendResult | undefined> {
    const eventId = this.#context.newId();
    const sequence = base.sequence + 1;
    const digest = await this.#appendAfter(
      base,
      { eventId, key: key ?? null, text, root, rootNode },
      "apply",
    );
    if (digest === undefined) return undefined;
    this.#seen(sequence, root, digest);
    return { sequence, eventId, rootId: toHex(root) };
  }

  async #insert(text: string, key: string | null): Promise<AppendResult> {
    const eventId = this.#context.newId();
    const guess = this.guess();
    if (guess !== undefined) {
      const digest = await this.#appendAfter(
        guess,
        { eventId, key, text, root: guess.root },
        "append",
      );
      if (digest !== undefined) {
        this.#seen(guess.sequence + 1, guess.root, digest);
        return { sequence: guess.sequence + 1, eventId, rootId: toHex(guess.root) };
      }
    }
    // No guess, or a stale one: the newest event read under the write lock, which cannot be stale.
    const head = await this.head();
    const digest = await this.#appendAfter(head, { eventId, key, text, root: head.root }, "append");
    if (digest === undefined) this.#scope.doom(storageFailure());
    this.#seen(head.sequence + 1, head.root, digest);
    return { sequence: head.sequence + 1, eventId, rootId: toHex(head.root) };
  }

  /** Remembers the event just written as the lease's guess of the newest one. */
  #seen(sequence: number, root: Uint8Array, digest: Uint8Array): void {
    this.#hint.root = root;
    this.#hint.sequence = sequence;
    this.#hint.digest = digest;
  }

  /**
   * The event after `base`, at `row.root`: its digest, or undefined, with
   * nothing written, when `base` is stale.
   */
  async #appendAfter(
    base: Head,
    row: {
      eventId: string;
      key: string | null;
      text: string;
      root: Uint8Array;
      rootNode?: Uint8Array | undefined;
    },
    action: "append" | "apply",
  ): Promise<Uint8Array | undefined> {
    const sequence = base.sequence + 1;
    const writtenAt = this.#context.clock();
    // A read head before the first event names no digest: the journal knows its first link.
    const previous = base.digest ?? (await firstLink(this.executor));
    const digest = eventDigest(this.#context.workspace.hash, previous, {
      sequence,
      eventId: row.eventId,
      key: row.key,
      record: row.text,
      root: row.root,
      writtenAt,
    });
    // One await on the way of every step: the failure rules are called only on a failure.
    try {
      const { changes } = await this.executor.execute(APPEND_AFTER, [
        sequence,
        row.eventId,
        row.key,
        row.text,
        row.root,
        row.rootNode ?? null,
        base.sequence,
        row.root,
        writtenAt,
        digest,
        base.sequence,
        // Only before the first event may the base be missing: a guess of a
        // rolled-back event names a sequence no row holds, and writes nothing.
        base.sequence === 0 ? previous : null,
        previous,
      ]);
      return changes === 1 ? digest : undefined;
    } catch (error) {
      let failure: unknown = error;
      try {
        await this.#failed(error, action, row.key);
      } catch (refusal) {
        failure = refusal;
      }
      return stale(failure);
    }
  }

  /** The lifecycle's own refusal for an append (or an apply's event) on a run not running. */
  async #lifecycle(error: unknown, action: "append" | "apply"): Promise<unknown> {
    const { rows } = await this.executor.execute("SELECT status FROM run WHERE singleton = 1");
    const status = rows[0]?.status;
    if (typeof status !== "string") return error;
    return lifecycleRefusal(status as RunStatus, action, undefined, error) ?? error;
  }

  /**
   * Throws what a failed append means. The run not running (the schema's
   * journal_run_running trigger) is the lifecycle's own refusal of this one
   * statement, which wrote nothing. Any other constraint failure on append
   * means the stored run is inconsistent: a storage failure, never committed
   * past.
   */
  async #failed(error: unknown, action: "append" | "apply", key: string | null): Promise<never> {
    // Refused because the transaction was doomed before: that failure, unchanged.
    if (error === this.#scope.doomed) throw error;
    if (isLifecycleRefusal(error)) throw await this.#lifecycle(error, action);
    // A keyed append whose key names an event already: the append reads that event.
    if (key !== null && action === "append" && isRunledgerError(error, "constraint_unique")) {
      throw new KeyTaken();
    }
    // An apply's key that names an event already.
    if (key !== null && isRunledgerError(error, "constraint_unique")) {
      throw new RunledgerError(
        "idempotency_conflict",
        `the key ${JSON.stringify(key)} already names an event; an apply's key is new or refused ` +
          "(nothing of this apply was written): use a new key for a new root",
        { cause: error },
      );
    }
    if (
      isRunledgerError(error) &&
      error.code.startsWith("constraint") &&
      error.sqliteCode !== "SQLITE_CONSTRAINT_TRIGGER"
    ) {
      this.#scope.doom(storageFailure(error));
    }
    throw error;
  }
}

/** A keyed append's row refused by the key index: the key names an event already (#appendKeyed). */
class KeyTaken extends Error {}

/** The lifecycle's refusals of an append (lifecycle.ts), after which a repeated key still reads its event. */
const LIFECYCLE_REFUSALS: ReadonlySet<string> = new Set(["run_finished", "run_not_running"]);

/**
 * Undefined when a guessed append failed on a trigger — a stale sequence (the
 * gap-free trigger) or the database refusing the event for another reason:
 * nothing was written, and the unguessed append tells which. Throws otherwise.
 */
function stale(failure: unknown): undefined {
  if (isRunledgerError(failure) && failure.sqliteCode === "SQLITE_CONSTRAINT_TRIGGER") {
    return undefined;
  }
  throw failure;
}

/** The newest event: its sequence (0 before the first), root (the current root) and digest. */
export type Head = RootBase;

function storageFailure(cause?: unknown): RunledgerError {
  return new RunledgerError(
    "corrupt",
    "the journal refused an event that should have fitted: the stored run is inconsistent; run verify, then restore it from a copy",
    cause === undefined ? {} : { cause },
  );
}

/**
 * The last event a lease saw appended (by its own append or apply): its
 * sequence, the root current with it and its digest. A guess that spares an
 * append reading any of them: never trusted, the append that uses it writes
 * nothing when it is stale (see APPEND_AFTER) and then reads the newest event.
 */
export interface RootHint {
  root: Uint8Array | undefined;
  sequence?: number | undefined;
  digest?: Uint8Array | undefined;
}

/** A journal record as stored, or `invalid_json`. */
export function journalText(record: JsonObject): string {
  return toJsonText(record, "the journal record", true);
}

/**
 * A stored row as an event. A row a damaged file breaks — a record that is
 * no longer JSON, a field of another type — is `corrupt`, naming the event's
 * sequence, never a raw parse error.
 */
function toEvent(row: Row): JournalEvent {
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

function isJsonText(value: unknown): boolean {
  if (typeof value !== "string") return false;
  try {
    JSON.parse(value);
    return true;
  } catch {
    return false;
  }
}

function isRootId(value: unknown): value is Uint8Array {
  return value instanceof Uint8Array && value.length === 32;
}

/** A journal event a damaged file no longer holds whole. */
function damagedEvent(sequence: number, what: string, cause?: unknown): RunledgerError {
  return new RunledgerError(
    "corrupt",
    `journal event ${sequence} is damaged: ${what}; run verify, then restore the file from a copy`,
    { details: { sequence }, ...(cause === undefined ? {} : { cause }) },
  );
}
