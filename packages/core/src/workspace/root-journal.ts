/**
 * What the workspace asks of the journal. A new root becomes current by the
 * journal event that names it, and the journal — its tables included —
 * belongs to run/, the layer above: so the workspace states here the little
 * it needs, the roots the events record and the publishing of a new one,
 * and run/ hands its journal in (run/journal-roots.ts, run/scopes.ts).
 * workspace/ never imports run/, and runs no SQL on the journal's tables.
 */
import type { Executor } from "../port/driver.js";
import type { JsonObject } from "../port/json.js";
import type { WriteScope } from "../transaction/scope.js";

/** The newest event: its sequence (0 before the first) and its root, the current one. */
export interface RootBase {
  readonly sequence: number;
  readonly root: Uint8Array;
  /** The root's bytes when the event holds them (a read head; a guess never carries them). */
  readonly rootBytes?: Uint8Array | undefined;
  /**
   * The event's digest, which the next event chains from; undefined before
   * the first event, whose link the journal knows.
   */
  readonly digest?: Uint8Array | undefined;
}

/** A root as the journal records it: its id and, when an event holds them, its node's bytes. */
export interface RootRef {
  readonly id: Uint8Array;
  readonly bytes?: Uint8Array | undefined;
}

/** A new workspace root made current: the sequence of the journal event naming it, and the root's id (hex). */
export interface ApplyResult {
  readonly sequence: number;
  readonly rootId: string;
}

/** A journal event, as the workspace's history lists it: where its root became current. */
export interface HistoryEntry {
  readonly sequence: number;
  readonly eventId: string;
  readonly rootId: string;
}

/** The roots the journal records, as every workspace read asks for them, on the executor it reads with. */
export interface JournalRoots {
  /** The newest event, with its root's bytes when it holds them: under the write lock this is exact. */
  head(executor: Executor): Promise<RootBase>;
  /** The bytes of root `id` as the newest event holding them holds them, if an event does. */
  heldBytes(executor: Executor, id: Uint8Array): Promise<Uint8Array | undefined>;
  /** The root event `sequence` records; undefined when there is no such event (never written, or pruned). */
  eventRoot(executor: Executor, sequence: number): Promise<RootRef | undefined>;
  /** The events after sequence `after`, oldest first, at most `limit`, each with the root it records. */
  events(executor: Executor, after: number, limit: number): Promise<HistoryEntry[]>;
  /** Every root an event records, once, in the order they were first recorded, each with its bytes when an event holds them. */
  roots(executor: Executor): Promise<RootRef[]>;
}

/** The journal as one apply, in one savepoint, sees it. */
export interface RootPublisher {
  /** The lease's guess of the newest event, or undefined when it has none. */
  guess(): RootBase | undefined;
  /** The newest event, read: under the write lock this is exact. */
  head(): Promise<RootBase>;
  /**
   * Appends the event after `base` at `root`, holding `rootBytes` (the root's
   * bytes, when small enough to be held); undefined, with nothing written,
   * when `base` is no longer the newest event. Answered now, without a
   * promise, where the event's statement ran now (`WriteScope.runsNow`) and
   * was not refused; a failure may then be thrown rather than rejected.
   */
  publish(
    text: string,
    base: RootBase,
    root: Uint8Array,
    rootBytes?: Uint8Array,
    key?: string,
  ): ApplyResult | undefined | Promise<ApplyResult | undefined>;
}

/** The journal a workspace writer is given by its run. */
export interface RootJournal {
  /** A record's stored text; `invalid_json` before anything is written. */
  text(record: JsonObject): string;
  /** Refuses an idempotency key the journal would not store (`invalid_argument`), before anything is written. */
  checkKey(key: unknown): asserts key is string;
  /** The journal writing in `scope`. */
  at(scope: WriteScope): RootPublisher;
  /**
   * Drops the events before sequence `before`, keeping the chain verifiable
   * from the oldest one kept; answers how many were dropped.
   */
  prune(scope: WriteScope, before: number): Promise<number>;
}
