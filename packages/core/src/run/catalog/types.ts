/**
 * What the catalog answers and takes: one run's entry, a listing's filters
 * and page, and what a reconcile did.
 */
import type { RunStatus, StopReason } from "../types.js";

/** One run as the catalog lists it: the run row's identity, status and times, and its last sequence. */
export interface RunEntry {
  /** The run's canonical location: what `store.open` takes. */
  readonly location: string;
  readonly workflowId: string;
  readonly runId: string;
  readonly status: RunStatus;
  readonly stopReason: StopReason | null;
  readonly createdAt: number;
  readonly updatedAt: number;
  /** The newest journal sequence when the catalog last saw the run (0 before its first event). */
  readonly lastSequence: number;
}

export interface RunListOptions {
  readonly workflowId?: string;
  /** One status or several: a run in any of them. */
  readonly status?: RunStatus | readonly RunStatus[];
  /** Only runs created strictly after this time (ms since the epoch). */
  readonly createdAfter?: number;
  /** Only runs updated strictly after this time (ms since the epoch). */
  readonly updatedAfter?: number;
  /** The `next` of the page before: this page starts after it. */
  readonly after?: string;
  /** Runs a page, 1 to 10,000. Default 100. */
  readonly limit?: number;
}

/** A page of runs, newest first (by creation time, then location). */
export interface RunList {
  readonly runs: readonly RunEntry[];
  /** Pass as `after` for the next page; undefined on the last page. */
  readonly next: string | undefined;
}

export interface ReconcileOptions {
  /**
   * Also add the runs found in this directory (or, on a server, …) that the
   * catalog does not list yet. Without it, only the rows the catalog holds
   * are checked against their runs.
   */
  readonly directory?: string;
}

/** What one `reconcile` changed, by location. */
export interface ReconcileReport {
  /** Rows written for runs the catalog did not list. */
  readonly added: readonly string[];
  /** Rows rewritten because they disagreed with their run. */
  readonly updated: readonly string[];
  /** Rows deleted because their run is gone (or is no run). */
  readonly removed: readonly string[];
  /** Files in `directory` that are no run, with the code their open was refused with. */
  readonly skipped: readonly { readonly location: string; readonly code: string }[];
  /** Rows that agreed with their run. */
  readonly unchanged: number;
}
