/**
 * The hook: the identity a repository writes through. Every route call names
 * a hook, and a commit-log unit is bound to a hook (never to an ambient
 * async context), so core needs nothing runtime-specific to know which unit
 * a write belongs to.
 *
 * Invariants:
 * - a hook's `format` is the format of the datastore it writes into (2 or 3);
 *   the route reads it only when no unit is bound, never more than once a call;
 * - `signal` records a route-1 path change in the datastore's current write
 *   (the sync signal of format 2), so it lands or rolls back with that write;
 * - `observer`, when present, is told of every route-1 signal, every route-2
 *   call and op, and every document read — it observes, never changes.
 * - `reconciler`, when present, puts the hook's documents back to what the
 *   commit log holds; `bindUnit` attaches it to the unit, which calls it for
 *   the keys whose staged change did not land (docs/routing.md).
 */
import type { DocumentReconciler } from "../commit-log/types.js";

/** 2: documents plus path signals. 3: documents plus typed changes in a commit log. */
export type DatastoreFormat = 2 | 3;

/** A route-1 signal: a document path written or deleted, for sync. */
export interface PathChange {
  readonly kind: "write" | "delete";
  /** The path as the repository names it (before any namespace). */
  readonly path: string;
}

/** One thing the route or the datastore did, as an observer sees it. */
export type RouteRecord =
  | {
      readonly route: "signal";
      readonly caller: string;
      readonly kind: PathChange["kind"];
      readonly key: string;
    }
  | { readonly route: "stage"; readonly caller: string; readonly kind: "skipped" }
  | {
      readonly route: "stage";
      readonly caller: string;
      readonly kind: string;
      readonly key: string;
      readonly op: "put" | "tombstone";
    }
  | {
      readonly route: "read";
      readonly caller: string;
      readonly kind: "get" | "digest" | "list";
      readonly key: string;
    };

export interface RouteObserver {
  record(entry: RouteRecord): void;
}

export interface ChangeHook {
  readonly format: DatastoreFormat;
  /** The operation now writing through this hook ("runs.update"), for observers. */
  readonly caller: string;
  readonly observer: RouteObserver | undefined;
  /** Records a route-1 path change in the current write. */
  signal(change: PathChange): Promise<void>;
  /** Puts documents back to the log's versions (a format-3 datastore's hook has one). */
  readonly reconciler?: DocumentReconciler | undefined;
}
