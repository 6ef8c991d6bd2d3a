/**
 * The lines the counter process and the suite exchange. The suite starts it
 * with one JSON argument (CounterRequest); it answers on stdout with one JSON
 * CounterMessage per line and starts counting when it reads "go" on stdin.
 */
import type { DriverSource, FailedMessage } from "./common.js";

export interface CounterRequest extends DriverSource {
  /** An existing database holding `counter (id INTEGER PRIMARY KEY, n INTEGER NOT NULL)` with row 1. */
  readonly location: string;
  /** How many transactions to run, each adding one to row 1. */
  readonly transactions: number;
}

export type CounterMessage =
  /** The store is open; waiting for "go". */
  | { readonly state: "ready" }
  /** Every transaction committed, in `ms` from "go". */
  | { readonly state: "done"; readonly committed: number; readonly ms: number }
  | FailedMessage;
