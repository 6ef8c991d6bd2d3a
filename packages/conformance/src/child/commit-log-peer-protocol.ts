/**
 * What the suite asks of a commit-log peer process and what it answers. The
 * suite starts it with one JSON argument (LogPeerRequest); the peer works
 * through core's CommitLogStore / ReadModelStore on its own driver, prints
 * one JSON LogPeerReport line on stdout and exits (holding nothing open).
 */
import type { CatalogRow, CommitResult } from "@runledger/core/commit-log";
import type { DriverSource, FailedMessage } from "./common.js";

/** One op of a change, as JSON: text content is stored as UTF-8. */
export interface OpSpec {
  readonly op: "put" | "tombstone";
  readonly key: string;
  readonly text?: string;
  readonly expect?: "absent" | "present" | { readonly sha256: string };
}

export interface ChangeSpec {
  readonly intent: string;
  readonly partition: string;
  readonly ops: readonly OpSpec[];
}

/** The changes one unit of work stages, in order; each unit is committed before the next begins. */
export type UnitSpec = readonly ChangeSpec[];

export interface LogPeerRequest extends DriverSource {
  /** The commit log; created when `write` is given, otherwise it must exist. */
  readonly log: string;
  /** Units to stage and commit into the log, in order. */
  readonly write?: readonly UnitSpec[];
  /** A read model to create (if new) and catch up from the log. */
  readonly readModel?: string;
}

export interface DocumentDigest {
  readonly partition: string;
  readonly key: string;
  /** SHA-256 (hex) of the document's bytes. */
  readonly sha256: string;
  readonly size: number;
}

export type LogPeerReport =
  | {
      readonly state: "done";
      readonly driver: string;
      readonly logId: string;
      /** Results of the units written, in order. */
      readonly results: readonly CommitResult[];
      /** When a read model was caught up: its cursor, catalog and documents. */
      readonly model: {
        readonly appliedCommit: number;
        readonly catalog: readonly CatalogRow[];
        readonly documents: readonly DocumentDigest[];
      } | null;
    }
  | FailedMessage;
