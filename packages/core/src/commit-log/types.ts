/**
 * What the commit log answers: staged ops, landed commits, refusals, and the
 * result of committing a unit of work.
 */
import type { TypedChange } from "../changes/change.js";
import type { Intent } from "../changes/intents.js";
import type { Expectation } from "../changes/ops.js";

/** One op as it waits in the staging area. */
export interface StagedOp {
  /** The batch it commits in: one commit per partition per batch. */
  readonly batch: number;
  /** Its place in the batch, from 0. */
  readonly ordinal: number;
  readonly partition: string;
  readonly intent: Intent;
  readonly op: "put" | "tombstone";
  readonly key: string;
  /** The content digest of a put (hex); null for a tombstone. */
  readonly sha256: string | null;
  readonly expect: Expectation | null;
}

/** One commit as the log holds it. */
export interface LogCommit {
  /** The log's global order, from 1, gap-free: what a read model's cursor counts. */
  readonly commitId: number;
  readonly txnId: string;
  readonly batch: number;
  readonly partition: string;
  /** The partition's own order, from 1, gap-free. */
  readonly sequence: number;
  readonly intent: Intent;
  readonly opCount: number;
  readonly stagedAt: number;
  readonly committedAt: number;
}

/** One op of a landed commit. */
export interface LogOp {
  readonly commitId: number;
  readonly ordinal: number;
  readonly op: "put" | "tombstone";
  readonly key: string;
  readonly sha256: string | null;
  readonly expect: Expectation | null;
}

/** A key that holds content now. */
export interface LiveKey {
  readonly partition: string;
  readonly key: string;
  readonly sha256: string;
  /** The sequence of the commit that wrote it. */
  readonly sequence: number;
}

/** An expectation that did not hold: "absent" / "present" / "sha256:<hex>" against what was found. */
export interface ExpectationFailure {
  readonly key: string;
  readonly expected: string;
  /** "absent", or "sha256:<hex>" of the content the key held. */
  readonly found: string;
}

export type RefusalReason =
  /** An op's expectation failed: nothing of this partition was committed by the unit. */
  | "expectation_failed"
  /** A run partition held back because a data partition of the same unit was refused. */
  | "held_back";

export interface RefusedPartition {
  readonly partition: string;
  readonly reason: RefusalReason;
  /** The batches of the unit that did not land for this partition. */
  readonly batches: readonly number[];
  /** For expectation_failed: the failed expectations (the first 100), in op order. */
  readonly failures: readonly ExpectationFailure[];
  /** For expectation_failed: how many expectations failed in all. */
  readonly failureCount: number;
  /** For held_back: the refused data partitions that held it back. */
  readonly heldBecause: readonly string[];
}

export interface CommittedPartition {
  readonly partition: string;
  /** Its commits from this unit, in order. */
  readonly commits: readonly LogCommit[];
}

/** What the post-commit chunk check found. */
export interface ChunkCheck {
  /** Puts checked (each put's content looked up in the chunk store). */
  readonly checked: number;
  /** Contents that were missing and were stored again (hex digests). */
  readonly restored: readonly string[];
  /** Contents still missing: neither the content source nor the staging area had them. */
  readonly unavailable: readonly string[];
}

export interface CommitResult {
  readonly txnId: string;
  /** Partitions with commits from this unit, data partitions first, in commit order. */
  readonly committed: readonly CommittedPartition[];
  /** Partitions that did not land, with why. */
  readonly refused: readonly RefusedPartition[];
  readonly chunks: ChunkCheck;
  /**
   * Documents put back to what the log holds, in the datastores bound to this
   * unit (docs/routing.md): every key of a refused or held-back partition, in
   * key order. Empty when everything landed, or no datastore was bound.
   */
  readonly reconciled: readonly ReconciledKey[];
}

/** What `abandon()` answers. */
export interface AbandonResult {
  readonly txnId: string;
  /** Every key the unit staged, put back to what the log holds, in key order. */
  readonly reconciled: readonly ReconciledKey[];
}

/**
 * What the log holds for one key of a partition: its latest landed content
 * (`present`, with the bytes from the chunk store — undefined when the chunk
 * store lacks them), or nothing (`absent`: tombstoned, or never landed — the
 * live key index does not tell these apart, and a datastore needs neither).
 */
export type LandedVersion =
  | {
      readonly partition: string;
      readonly key: string;
      readonly state: "present";
      readonly sha256: string;
      /** The sequence of the commit that wrote it. */
      readonly sequence: number;
      readonly bytes: Uint8Array | undefined;
    }
  | { readonly partition: string; readonly key: string; readonly state: "absent" };

/** One document a reconciliation put back: to the log's version of it, or removed (`absent`). */
export interface ReconciledKey {
  readonly partition: string;
  readonly key: string;
  readonly to: "log-version" | "absent";
}

/**
 * What puts a datastore's documents back to the versions the commit log
 * holds (a format-3 datastore's hook carries one). A unit bound to the hook
 * calls it with the keys whose staged change did not land. It writes no
 * route-1 signal and stages no typed change: the log already holds that state.
 */
export interface DocumentReconciler {
  /**
   * Writes each version (a present one's bytes are always given) in one
   * datastore transaction. False when it no longer can write (its handle was
   * released): nothing was written.
   */
  reconcile(versions: readonly LandedVersion[]): Promise<boolean>;
}

/** A unit of work the staging area holds, as `pendingUnits()` lists it. */
export interface PendingUnit {
  readonly txnId: string;
  /** staging: never sealed (its process stopped mid-staging); sealed: commit started, not finished. */
  readonly state: "staging" | "sealed";
  readonly batches: number;
  readonly createdAt: number;
}

/** Gives back the bytes of a content by its digest, when the chunk store lost them. */
export interface ContentSource {
  read(sha256: string): Promise<Uint8Array | undefined>;
}

/**
 * A provisional turn of staging (`unit.openScope()`): what it stages stays
 * in the unit only if the scope is confirmed; `discard()` removes it again,
 * from memory and from the staging area alike. A datastore write opens one
 * around its transaction and confirms it only once its COMMIT succeeded.
 */
export interface StagingScope {
  /** Stages in this scope, all or none (as `unit.stage`). */
  stage(changes: TypedChange | readonly TypedChange[]): Promise<void>;
  /** Keeps what the scope staged and ends the scope. */
  confirm(): Promise<void>;
  /** Removes what the scope staged and ends the scope. */
  discard(): Promise<void>;
}
