/**
 * The lines the counter process and the suite exchange. The suite starts it
 * with one JSON argument (CounterRequest); it answers on stdout with one JSON
 * CounterMessage per line and starts counting when it reads "go" on stdin.
 */
export interface CounterRequest {
  /** Module specifier (or absolute path / file: URL) that exports the driver factory. */
  readonly module: string;
  readonly exportName: string;
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
  | { readonly state: "failed"; readonly code?: string; readonly message: string };
