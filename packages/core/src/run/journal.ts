import type { Executor } from "../port/driver.js";
import { isRunledgerError, RunledgerError } from "../port/errors.js";
import { toHex } from "../port/hash.js";
import type { Row, SqlValue } from "../port/values.js";
import type { WriteScope } from "../transaction/scope.js";
import { type JsonObject, toJsonText } from "./json.js";
import { isLifecycleRefusal, lifecycleRefusal } from "./lifecycle.js";
import type { AppendResult, JournalEvent, RunContext, RunStatus } from "./types.js";

const SELECT_EVENT = `SELECT sequence, event_id, idempotency_key, record, root_id, written_at FROM journal`;

const CURRENT_ROOT = "SELECT root_id FROM workspace_current WHERE singleton = 1";

// An append names the current root itself (one statement, not a read and a
// write) and returns the two columns it cannot know.
const APPEND = `INSERT INTO journal (sequence, event_id, idempotency_key, record, root_id, written_at)
VALUES ((SELECT coalesce(max(sequence), 0) + 1 FROM journal), ?, ?, ?,
  (SELECT root_id FROM workspace_current WHERE singleton = 1), ?)
RETURNING sequence, root_id`;

// With the last event a lease saw (its sequence and root, see RootHint): the
// next row with its values bound, written only while that root is still the
// current one — a primary-key lookup in the same statement, under the write
// lock. SQLite checks the sequence itself: the journal_gap_free trigger
// refuses one that is not max + 1. So a stale guess (another lease or
// process appended or moved the pointer, or a rollback undid this lease's own
// work) writes nothing: no row when the root moved, a refusal when the
// sequence did. An apply guesses the root it has just made current.
const APPEND_NEXT = `INSERT INTO journal (sequence, event_id, idempotency_key, record, root_id, written_at)
SELECT ?, ?, ?, ?, root_id, ? FROM workspace_current WHERE singleton = 1 AND root_id = ?`;

// An apply whose guess was stale: the root it made current, the sequence
// computed; the sequence — the row's rowid (INTEGER PRIMARY KEY) — comes back
// as lastInsertRowid, which every driver reports for a statement returning no rows.
const APPEND_AT_ROOT = `INSERT INTO journal (sequence, event_id, idempotency_key, record, root_id, written_at)
VALUES ((SELECT coalesce(max(sequence), 0) + 1 FROM journal), ?, ?, ?, ?, ?)`;

const BY_KEY = `SELECT sequence, event_id, record, root_id FROM journal WHERE idempotency_key = ?`;

const LIST = `${SELECT_EVENT} WHERE sequence > ? ORDER BY sequence LIMIT ?`;

/** Reads of the journal: events in sequence order. */
export class JournalReader {
  protected readonly executor: Executor;

  constructor(executor: Executor) {
    this.executor = executor;
  }

  /** Events after `after` (exclusive, default 0), at most `limit` (default 1000). */
  async list(options: { after?: number; limit?: number } = {}): Promise<JournalEvent[]> {
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
    let after = options.after ?? 0;
    const limit = options.pageSize ?? 500;
    for (;;) {
      const page = await this.list({ after, limit });
      yield* page;
      if (page.length < limit) return;
      after = page[page.length - 1]!.sequence;
    }
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
    // Not async: a keyless append is one statement, and this is the hot path.
    try {
      const text = journalText(record);
      const key = options.key;
      if (key === undefined) return this.#insert(text, null, undefined);
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
    if (first === undefined) return this.#insert(text, key, undefined);
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
   * Appends a record already serialized by `journalText`, at the root the
   * caller has just made current (the workspace's apply): no read of the
   * current-root pointer.
   * @internal
   */
  appendAtRoot(text: string, root: Uint8Array): Promise<AppendResult> {
    return this.#insert(text, null, root);
  }

  /**
   * Appends a record already serialized by `journalText`, with no key (a
   * resume's own event).
   * @internal
   */
  appendText(text: string): Promise<AppendResult> {
    return this.#insert(text, null, undefined);
  }

  async #insert(
    text: string,
    key: string | null,
    knownRoot: Uint8Array | undefined,
  ): Promise<AppendResult> {
    const eventId = this.#context.newId();
    const now = this.#context.clock();
    let sequence: number | undefined;
    let root: unknown = knownRoot;
    try {
      // First the guess: the sequence after the last this lease saw, at the
      // root the caller just made current or the one last seen with it.
      const guessedRoot = knownRoot ?? this.#hint.root;
      const lastSequence = this.#hint.sequence;
      if (guessedRoot !== undefined && lastSequence !== undefined) {
        const next = lastSequence + 1;
        if (await this.#appendNext([next, eventId, key, text, now, guessedRoot])) {
          sequence = next;
          root = guessedRoot;
        }
      }
      if (sequence === undefined && knownRoot !== undefined) {
        const result = await this.executor.execute(APPEND_AT_ROOT, [
          eventId,
          key,
          text,
          knownRoot,
          now,
        ]);
        sequence = Number(result.lastInsertRowid);
      } else if (sequence === undefined) {
        // No guess, or a stale one: the statement names the sequence and the root.
        const row = (await this.executor.execute(APPEND, [eventId, key, text, now])).rows[0];
        sequence = Number(row?.sequence);
        root = row?.root_id;
      }
    } catch (error) {
      // The run is not running (schema trigger journal_run_running): a
      // refusal of this one statement, which wrote nothing.
      if (isLifecycleRefusal(error)) throw await this.#lifecycle(error, knownRoot);
      // Any other constraint failure here means the stored run is
      // inconsistent: a storage failure, never committed past.
      if (isRunledgerError(error) && error.code.startsWith("constraint")) {
        this.#scope.doom(await this.#explain(error));
      }
      throw error;
    }
    if (!(root instanceof Uint8Array)) this.#scope.doom(noCurrentRoot());
    this.#hint.root = root;
    this.#hint.sequence = sequence;
    return { sequence, eventId, rootId: toHex(root) };
  }

  /** The guessed next row: false when the guess was stale and nothing was written. */
  async #appendNext(params: SqlValue[]): Promise<boolean> {
    try {
      return (await this.executor.execute(APPEND_NEXT, params)).changes === 1;
    } catch (error) {
      if (isRunledgerError(error) && error.sqliteCode === "SQLITE_CONSTRAINT_TRIGGER") return false;
      throw error;
    }
  }

  /** The lifecycle's own refusal for an append (or an apply's event) on a run not running. */
  async #lifecycle(error: unknown, knownRoot: Uint8Array | undefined): Promise<unknown> {
    const { rows } = await this.executor.execute("SELECT status FROM run WHERE singleton = 1");
    const status = rows[0]?.status;
    if (typeof status !== "string") return error;
    return (
      lifecycleRefusal(
        status as RunStatus,
        knownRoot === undefined ? "append" : "apply",
        undefined,
        error,
      ) ?? error
    );
  }

  /** A constraint failure on append: a missing current root says so; anything else is itself. */
  async #explain(error: RunledgerError): Promise<RunledgerError> {
    const { rows } = await this.executor.execute(CURRENT_ROOT);
    return rows[0]?.root_id instanceof Uint8Array ? error : noCurrentRoot(error);
  }
}

function noCurrentRoot(cause?: unknown): RunledgerError {
  return new RunledgerError(
    "corrupt",
    "the run has no current workspace root; restore it from a copy",
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
