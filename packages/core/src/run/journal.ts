/**
 * Appends to the journal, the run's append-only event log: gap-free
 * sequences, idempotency keys, each event chained to the one before it by
 * its digest, and the workspace root each event records — an apply's new
 * root published by its event. (Its reads: ./journal-reader.ts.)
 */
import { toHex } from "../port/bytes.js";
import type { QueryResult } from "../port/driver.js";
import { isRunledgerError, RunledgerError } from "../port/errors.js";
import { type JsonObject, toJsonText } from "../port/json.js";
import { checkNames } from "../port/options.js";
import type { SqlValue } from "../port/values.js";
import type { WriteScope } from "../transaction/scope.js";
import type { NodeCache } from "../workspace/node-cache.js";
import { holdRoot } from "../workspace/node-loader.js";
import type { RootBase } from "../workspace/root-journal.js";
import { eventDigest, firstLink, firstLinkNow } from "./chain.js";
import { checkKey, damagedEvent, isJsonText, isRootId, JournalReader } from "./journal-reader.js";
import { readHead, readHeadNow } from "./journal-roots.js";
import { isLifecycleRefusal, lifecycleRefusal } from "./lifecycle.js";
import type { AppendResult, RunContext, RunStatus } from "./types.js";

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
// is looked for. Each value is bound once, named by the one-row `e`.
const APPEND_ROW = (
  digest: string,
) => `INSERT INTO journal (sequence, event_id, idempotency_key, record, root_id, root_node, written_at, digest)
SELECT e.sequence, e.event_id, e.idempotency_key, e.record, e.root_id,
  coalesce(e.root_node,
    (SELECT j.root_node FROM journal AS j WHERE j.sequence = e.base AND j.root_id = e.root_id)),
  e.written_at, ${digest}
FROM (SELECT ? AS sequence, ? AS event_id, ? AS idempotency_key, ? AS record, ? AS root_id,
  ? AS root_node, ? AS written_at, ? AS digest, ? AS base, ? AS first_link, ? AS previous) AS e`;
const BASE_IS_NEWEST = `coalesce((SELECT j.digest FROM journal AS j WHERE j.sequence = e.base), e.first_link) = e.previous`;
const APPEND_AFTER = `${APPEND_ROW("e.digest")}
WHERE ${BASE_IS_NEWEST}`;

// The same row sent with its answer assumed (an optimistic transaction on a
// server, WriteScope.assumeAnswer): a stale base must fail it, not leave it
// unwritten, since nobody reads how many rows it changed. So the check moves
// into the row: a base that is not the stored one makes the digest NULL,
// which the column refuses; a base with events after it makes a sequence
// the gap-free trigger refuses. The transaction then fails whole.
const APPEND_ASSUMED = APPEND_ROW(`CASE WHEN ${BASE_IS_NEWEST} THEN e.digest END`);

const LATER = { later: true } as const;

const BY_KEY = `SELECT sequence, event_id, record, root_id FROM journal WHERE idempotency_key = ?`;

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

  constructor(scope: WriteScope, context: RunContext, hint: RootHint = noHint()) {
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
  guess(): RootBase | undefined {
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
  async head(): Promise<RootBase> {
    const head = await readHead(this.executor);
    return head.digest !== undefined ? head : { ...head, digest: await firstLink(this.executor) };
  }

  /**
   * Publishes a new workspace root: the event after `base` (the newest event
   * the root was computed from), at `root`, holding `rootBytes` (the root's
   * node's bytes) when given. Undefined, with nothing written, when `base` is no
   * longer the newest event. Answered now, without a promise, where the
   * statement ran now (`WriteScope.executeNow`) and was not refused.
   * @internal
   */
  publish(
    text: string,
    base: RootBase,
    root: Uint8Array,
    rootBytes?: Uint8Array,
    key?: string,
  ): AppendResult | undefined | Promise<AppendResult | undefined> {
    const eventId = this.#context.newId();
    const sequence = base.sequence + 1;
    const row = { eventId, key: key ?? null, text, root, rootBytes };
    const written = this.#appendAfter(base, row, "apply");
    const published = (digest: Uint8Array | undefined): AppendResult | undefined => {
      if (digest === undefined) return undefined;
      this.#seen(sequence, root, digest);
      return { sequence, eventId, rootId: toHex(root) };
    };
    return written instanceof Promise ? written.then(published) : published(written);
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
   * nothing written, when `base` is stale. Answered now where its statement
   * ran now and was not refused; a promise otherwise.
   */
  #appendAfter(
    base: RootBase,
    row: AppendRow,
    action: "append" | "apply",
  ): Uint8Array | undefined | Promise<Uint8Array | undefined> {
    const previous = base.digest;
    // A read head before the first event names no digest: the journal knows its first link.
    if (previous === undefined) {
      return firstLink(this.executor).then((link) =>
        this.#appendAfter({ ...base, digest: link }, row, action),
      );
    }
    const sequence = base.sequence + 1;
    const writtenAt = this.#context.clock();
    const digest = eventDigest(this.#context.workspace.hash, previous, {
      sequence,
      eventId: row.eventId,
      key: row.key,
      record: row.text,
      root: row.root,
      writtenAt,
    });
    const params = [
      sequence,
      row.eventId,
      row.key,
      row.text,
      row.root,
      row.rootBytes ?? null,
      writtenAt,
      digest,
      base.sequence,
      // Only before the first event may the base be missing: a guess of a
      // rolled-back event names a sequence no row holds, and writes nothing.
      base.sequence === 0 ? previous : null,
      previous,
    ];
    // An answer assumed is a server's (an optimistic transaction), whose statements never run now.
    if (this.#scope.assumeAnswer()) return this.#send(true, params, digest, action, row);
    let now: QueryResult | undefined;
    try {
      now = this.#scope.executeNow(APPEND_AFTER, params);
    } catch (error) {
      return this.#refused(error, action, row.key);
    }
    if (now === undefined) return this.#send(false, params, digest, action, row);
    return now.changes === 1 ? digest : undefined;
  }

  /**
   * `#appendAfter`'s statement through `execute`: where it cannot run now,
   * or with its answer assumed (`APPEND_ASSUMED`, sent with what follows it).
   */
  async #send(
    assumed: boolean,
    params: SqlValue[],
    digest: Uint8Array,
    action: "append" | "apply",
    row: AppendRow,
  ): Promise<Uint8Array | undefined> {
    try {
      if (assumed) {
        await this.executor.execute(APPEND_ASSUMED, params, LATER);
        return digest;
      }
      const { changes } = await this.executor.execute(APPEND_AFTER, params);
      return changes === 1 ? digest : undefined;
    } catch (error) {
      return this.#refused(error, action, row.key);
    }
  }

  /** What a refused event means: undefined when its base was stale (nothing written), else the failure thrown. */
  async #refused(
    error: unknown,
    action: "append" | "apply",
    key: string | null,
  ): Promise<undefined> {
    let failure: unknown = error;
    try {
      await this.#failed(error, action, key);
    } catch (refusal) {
      failure = refusal;
    }
    return stale(failure);
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

/** An event's own fields, as `#appendAfter` writes them after its base. */
interface AppendRow {
  readonly eventId: string;
  readonly key: string | null;
  readonly text: string;
  readonly root: Uint8Array;
  readonly rootBytes?: Uint8Array | undefined;
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
  sequence: number | undefined;
  digest: Uint8Array | undefined;
}

/** A hint naming no event yet, every field there from the start: a lease's hint keeps one shape. */
export function noHint(): RootHint {
  return { root: undefined, sequence: undefined, digest: undefined };
}

/**
 * A lease with no guess yet (its first write) takes one from the newest
 * event, read now, under the write lock — so exact — where the scope runs
 * statements now (a synchronous driver's). With the root's node at hand —
 * held in that event, or the empty root (`holdRoot`) — the transaction's first apply or
 * append then goes the way every later one does, on the guess
 * (workspace/apply.ts, `applyNow`), instead of reading the head itself
 * and taking the general edit: a run's first step costs what its later ones
 * do, and runs the same code. Nothing where the scope cannot read now, where
 * the root is not held (the apply reads it), or where a read fails (the
 * apply's own reads meet that again, and say so).
 */
export function primeHint(scope: WriteScope, hint: RootHint, nodes: NodeCache): void {
  let head: RootBase | undefined;
  let digest: Uint8Array | undefined;
  try {
    head = readHeadNow(scope);
    digest = head === undefined ? undefined : (head.digest ?? firstLinkNow(scope));
  } catch {
    return;
  }
  if (head === undefined || digest === undefined) return;
  if (!holdRoot(nodes, head.root, head.rootBytes)) return;
  hint.root = head.root;
  hint.sequence = head.sequence;
  hint.digest = digest;
}

/** A journal record as stored, or `invalid_json`. */
export function journalText(record: JsonObject): string {
  return toJsonText(record, "the journal record", true);
}
