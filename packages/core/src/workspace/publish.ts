/**
 * What the workspace asks of the journal. A new root becomes current by the
 * journal event that names it, and the journal belongs to run/, the layer
 * above: so the workspace states here the little it needs, and run/ hands its
 * journal writer in (run/scopes.ts). workspace/ never imports run/.
 */
import type { JsonObject } from "../port/json.js";
import type { WriteScope } from "../transaction/scope.js";

/** The newest event: its sequence (0 before the first) and its root, the current one. */
export interface RootBase {
  readonly sequence: number;
  readonly root: Uint8Array;
  /** The root's node when the event holds it (a read head; a guess never carries one). */
  readonly rootNode?: Uint8Array | undefined;
  /**
   * The event's digest, which the next event chains from (run/chain.ts);
   * undefined before the first event, whose link the journal knows.
   */
  readonly digest?: Uint8Array | undefined;
}

/** A root published: the event that names it. */
export interface PublishedRoot {
  readonly sequence: number;
  readonly rootId: string;
}

/** The journal as one apply, in one savepoint, sees it. */
export interface RootPublisher {
  /** The lease's guess of the newest event, or undefined when it has none. */
  guess(): RootBase | undefined;
  /** The newest event, read: under the write lock this is exact. */
  head(): Promise<RootBase>;
  /**
   * Appends the event after `base` at `root`, holding `rootNode` (the root's
   * bytes, when small enough to be held); undefined, with nothing written,
   * when `base` is no longer the newest event.
   */
  publish(
    text: string,
    base: RootBase,
    root: Uint8Array,
    rootNode?: Uint8Array,
    key?: string,
  ): Promise<PublishedRoot | undefined>;
}

/** The journal a workspace writer is given by its run. */
export interface RootJournal {
  /** A record's stored text; `invalid_json` before anything is written. */
  text(record: JsonObject): string;
  /** Refuses an idempotency key the journal would not store (`invalid_argument`), before anything is written. */
  checkKey(key: unknown): asserts key is string;
  /** The journal writing in `scope`. */
  at(scope: WriteScope): RootPublisher;
}
