/**
 * The journal: the run's append-only event log, its reads and its appends
 * (idempotency keys, gap-free sequences, the workspace root each event
 * records).
 */
import { isRunledgerError, RunledgerError } from "../port/errors.js";
import { toHex } from "../port/hash.js";
import { type JsonObject, toJsonText } from "../port/json.js";
import { keysetRows } from "../port/keyset.js";
import type { Row } from "../port/values.js";
import type { CallbackScope, WriteScope } from "../transaction/scope.js";
import { EMPTY_ROOT_ID_BYTES } from "../workspace/node.js";
import type { RootBase } from "../workspace/publish.js";
import { isLifecycleRefusal, lifecycleRefusal } from "./lifecycle.js";
import type { AppendResult, JournalEvent, RunContext, RunStatus } from "./types.js";

const SELECT_EVENT = `SELECT sequence, event_id, idempotency_key, record, root_id, written_at FROM journal`;

// Without a guess: the statement names the next sequence and the current
// root itself (one statement, not a read and a write) and returns both. A
// root held in the newest event's row is held in the new one too, so that
// every event keeps the root it records readable, whatever is pruned.
const APPEND = `INSERT INTO journal (sequence, event_id, idempotency_key, record, root_id, root_node, written_at)
VALUES ((SELECT coalesce(max(sequence), 0) + 1 FROM journal), ?, ?, ?,
  (SELECT root_id FROM workspace_current),
  (SELECT root_node FROM journal ORDER BY sequence DESC LIMIT 1), ?)
RETURNING sequence, root_id`;

// With a guess — the sequence and root of the newest event, as a lease last
// saw them (RootHint), or as an apply read them under the write lock — the
// next row with every value bound, written only while that event is still
// the newest at that root. SQLite checks the sequence itself: the
// journal_gap_free trigger refuses one that is not max + 1. So a stale guess
// (another lease or process appended or moved the root, or a rollback undid
// this lease's own work) writes nothing: no row when the root moved, a
// refusal when the sequence did. The row's root is the guessed one for an
// append, and the new root for an apply: publishing a root is this one row.
// Its node is the one given (an apply's new root, when small enough to be
// held), else the guessed event's when the root is the same (an append).
const APPEND_AFTER = `INSERT INTO journal (sequence, event_id, idempotency_key, record, root_id, root_node, written_at)
SELECT ?, ?, ?, ?, ?, coalesce(?, (SELECT root_node FROM journal WHERE sequence = ? AND root_id = ?)), ?
WHERE coalesce((SELECT root_id FROM journal WHERE sequence = ?), ?) = ?`;

const BY_KEY = `SELECT sequence, event_id, record, root_id FROM journal WHERE idempotency_key = ?`;

const LIST = `${SELECT_EVENT} WHERE sequence > ? ORDER BY sequence LIMIT ?`;

/**
 * Reads of the journal: events in sequence order. Each call is an operation
 * of the scope (scope.ts): the callback must await it.
 */
export class JournalReader {
  protected readonly executor: CallbackScope;

  constructor(scope: CallbackScope) {
    this.executor = scope;
  }

  /** Events after `after` (exclusive, default 0), at most `limit` (default 1000). */
  list(options: { after?: number; limit?: number } = {}): Promise<JournalEvent[]> {
    return this.executor.track(this.#list(options));
  }

  async #list(options: { after?: number; limit?: number }): Promise<JournalEvent[]> {
    const after = options.after ?? 0;
    const limit = options.limit ?? 1000;
    if (!Number.isSafeInteger(after) || after < 0 || !Number.isSafeInteger(limit) || limit < 0) {
      throw new RunledgerError(
        "invalid_argument",
        "journal.list takes whole numbers: after >= 0 and limit >= 0",
      );
    }
    const { rows } = await this.executor.execute(LIST, [after, limit]);
    return rows.map(toEvent);
  }

  /** Every event after `after`, fetched a page at a time so a long journal never sits whole in memory. */
  async *stream(options: { after?: number; pageSize?: number } = {}): AsyncGenerator<JournalEvent> {
    yield* keysetRows({
      start: options.after ?? 0,
      page: (after, limit) => this.list({ after, limit }),
      keyOf: (event) => event.sequence,
      limit: options.pageSize ?? 500,
    });
  }
}

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
    return this.#scope.track(this.#append(record, options.key));
  }

  #append(record: JsonObject, key: string | undefined): Promise<AppendResult> {
    // Not async: a keyless append is one statement, and this is the hot path.
    try {
      const text = journalText(record);
      if (key === undefined) return this.#insert(text, null);
      if (typeof key !== "string" || key.length < 1 || key.length > 512) {
        throw new RunledgerError(
          "invalid_argument",
          "an idempotency key is a string of 1 to 512 characters",
        );
      }
      return this.#appendKeyed(text, key);
    } catch (error) {
      return Promise.reject(error);
    }
  }

  /** With a key: the first event under it, or a new one. */
  async #appendKeyed(text: string, key: string): Promise<AppendResult> {
    const first = (await this.executor.execute(BY_KEY, [key])).rows[0];
    if (first === undefined) return this.#insert(text, key);
    if (first.record !== text) {
      throw new RunledgerError(
        "idempotency_conflict",
        `the key ${JSON.stringify(key)} already names event ${first.sequence} with a different ` +
          "record; use a new key for a new event",
        { details: { sequence: first.sequence } },
      );
    }
    return {
      sequence: Number(first.sequence),
      eventId: String(first.event_id),
      rootId: toHex(first.root_id as Uint8Array),
    };
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
    const { root, sequence } = this.#hint;
    return root === undefined || sequence === undefined ? undefined : { root, sequence };
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
  ): Promise<AppendResult | undefined> {
    const eventId = this.#context.newId();
    const sequence = base.sequence + 1;
    if (!(await this.#appendAfter(base, { eventId, key: null, text, root, rootNode }, "apply"))) {
      return undefined;
    }
    this.#hint.root = root;
    this.#hint.sequence = sequence;
    return { sequence, eventId, rootId: toHex(root) };
  }

  async #insert(text: string, key: string | null): Promise<AppendResult> {
    const eventId = this.#context.newId();
    const guess = this.guess();
    if (guess !== undefined) {
      if (await this.#appendAfter(guess, { eventId, key, text, root: guess.root }, "append")) {
        this.#hint.sequence = guess.sequence + 1;
        return { sequence: guess.sequence + 1, eventId, rootId: toHex(guess.root) };
      }
    }
    // No guess, or a stale one: the statement names the sequence and the root.
    const now = this.#context.clock();
    const row = (
      await this.#failures(() => this.executor.execute(APPEND, [eventId, key, text, now]), "append")
    ).rows[0];
    const sequence = Number(row?.sequence);
    const root = row?.root_id;
    if (!(root instanceof Uint8Array)) this.#scope.doom(storageFailure());
    this.#hint.root = root;
    this.#hint.sequence = sequence;
    return { sequence, eventId, rootId: toHex(root) };
  }

  /** The event after `base`, at `row.root`: false, with nothing written, when `base` is stale. */
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
  ): Promise<boolean> {
    // One await on the way of every step: the failure rules are called only on a failure.
    try {
      const { changes } = await this.executor.execute(APPEND_AFTER, [
        base.sequence + 1,
        row.eventId,
        row.key,
        row.text,
        row.root,
        row.rootNode ?? null,
        base.sequence,
        row.root,
        this.#context.clock(),
        base.sequence,
        // Only "no event yet" stands for the empty root: a guessed event
        // that is gone (a rollback undid it) matches no root, so the guess
        // writes nothing, whether or not the driver tells which trigger refused.
        base.sequence === 0 ? EMPTY_ROOT_ID_BYTES : null,
        base.root,
      ]);
      return changes === 1;
    } catch (error) {
      let failure: unknown = error;
      try {
        await this.#failed(error, action);
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
   * The run not running (the schema's journal_run_running trigger) is the
   * lifecycle's own refusal of this one statement, which wrote nothing. Any
   * other constraint failure on append means the stored run is inconsistent:
   * a storage failure, never committed past.
   */
  async #failures<T>(run: () => Promise<T>, action: "append" | "apply"): Promise<T> {
    try {
      return await run();
    } catch (error) {
      return this.#failed(error, action);
    }
  }

  /** Throws what a failed append means (see `#failures`). */
  async #failed(error: unknown, action: "append" | "apply"): Promise<never> {
    if (isLifecycleRefusal(error)) throw await this.#lifecycle(error, action);
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

/**
 * False when a guessed append failed on a trigger — a stale sequence (the
 * gap-free trigger) or the database refusing the event for another reason:
 * nothing was written, and the unguessed append tells which. Throws otherwise.
 */
function stale(failure: unknown): false {
  if (isRunledgerError(failure) && failure.sqliteCode === "SQLITE_CONSTRAINT_TRIGGER") return false;
  throw failure;
}

/** The newest event: its sequence (0 before the first) and root (the current root). */
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
 * sequence and the root current with it. A guess that spares an append
 * computing either: never trusted, the append that uses it writes nothing
 * when it is stale (see APPEND_NEXT) and then names both in the statement.
 */
export interface RootHint {
  root: Uint8Array | undefined;
  sequence?: number | undefined;
}

/** A journal record as stored, or `invalid_json`. */
export function journalText(record: JsonObject): string {
  return toJsonText(record, "the journal record", true);
}

function toEvent(row: Row): JournalEvent {
  return {
    sequence: Number(row.sequence),
    eventId: String(row.event_id),
    key: row.idempotency_key === null ? null : String(row.idempotency_key),
    record: JSON.parse(String(row.record)) as JsonObject,
    rootId: toHex(row.root_id as Uint8Array),
    writtenAt: Number(row.written_at),
  };
}
