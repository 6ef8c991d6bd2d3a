/**
 * What the suite asks of a routing peer process and what it answers. The
 * suite starts it with one JSON argument (RoutingPeerRequest); the peer runs
 * the routing scenario (families/routing-scenario.ts) on a new format-3
 * datastore through core's repositories and route, on its own driver,
 * staged into one unit of a new commit log, commits the unit, prints one
 * JSON RoutingPeerReport line on stdout and exits (holding nothing open).
 */
import type { CommitResult } from "@runledger/core/commit-log";
import type { DriverSource, FailedMessage } from "./common.js";

export interface RoutingPeerRequest extends DriverSource {
  /** The datastore to create (format 3). */
  readonly datastore: string;
  /** The commit log to create. */
  readonly log: string;
  readonly namespace?: string;
}

export type RoutingPeerReport =
  | {
      readonly state: "done";
      readonly driver: string;
      readonly logId: string;
      readonly result: CommitResult;
      /** The intent that last staged each `partition/key`, as the peer's route recorder saw it. */
      readonly intents: readonly (readonly [string, string])[];
      /** How many documents the datastore holds under the namespace. */
      readonly documents: number;
    }
  | FailedMessage;
