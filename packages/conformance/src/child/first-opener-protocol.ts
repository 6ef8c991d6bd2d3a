/**
 * The lines the first-opener process and the suite exchange. The suite starts
 * it with one JSON argument (FirstOpenerRequest); before each round it
 * reports "ready", opens that round's location with `create` when it reads
 * "go", and reports what it found.
 */
import type { RunCreate } from "@runledger/core";
import type { DriverSource, FailedMessage } from "./common.js";

export interface FirstOpenerRequest extends DriverSource {
  /** One new location per round, the same list for every process. */
  readonly locations: readonly string[];
  readonly create: RunCreate;
  /** This process's clock reading: the run's createdAt tells which process created it. */
  readonly clock: number;
}

export type FirstOpenerMessage =
  /** Waiting for "go" to open `locations[round]`. */
  | { readonly state: "ready"; readonly round: number }
  /** Opened it: the run's createdAt, whoever created it. */
  | { readonly state: "opened"; readonly round: number; readonly createdAt: number }
  | FailedMessage;
