/**
 * What the suite asks of a run-peer process and what it answers. The suite
 * starts it with one JSON argument (PeerRequest); the peer does the work
 * through core's RunStore on its own driver, prints one JSON PeerReport line
 * on stdout and exits. Exiting is part of the contract: the peer holds
 * nothing open on the file afterwards.
 */
import type { AppendResult, JournalEvent, JsonObject, RunCreate, RunInfo } from "@runledger/core";
import type { DriverSource, FailedMessage } from "./common.js";

export interface PeerRequest extends DriverSource {
  readonly location: string;
  /** Create the run when the location holds none; without it the run must exist. */
  readonly create?: RunCreate;
  /** Every timestamp the store writes (ms since the epoch); default the real clock. */
  readonly clock?: number;
  /** Event ids are `${idPrefix}1`, `${idPrefix}2`, …; default random UUIDs. */
  readonly idPrefix?: string;
  /** Appended in one transaction, in this order, after the open. */
  readonly appends?: readonly PeerAppend[];
  /** Run the deep verify after the appends. */
  readonly verify?: boolean;
  /**
   * After the store is closed, run `PRAGMA wal_checkpoint(TRUNCATE)` on a
   * fresh connection, so that the main file holds every committed page.
   */
  readonly checkpoint?: boolean;
}

export interface PeerAppend {
  readonly record: JsonObject;
  readonly key?: string;
}

export interface PeerVerify {
  readonly ok: boolean;
  readonly problems: readonly string[];
  readonly events: number;
}

export type PeerReport =
  | {
      readonly state: "done";
      /** The peer driver's name, so the suite can tell which engine did the work. */
      readonly driver: string;
      readonly run: RunInfo;
      /** The whole journal after the appends, in order. */
      readonly events: readonly JournalEvent[];
      readonly appended: readonly AppendResult[];
      readonly verify: PeerVerify | null;
      /** wal_checkpoint's [busy, log frames, checkpointed frames]. */
      readonly checkpoint: readonly number[] | null;
    }
  | FailedMessage;
