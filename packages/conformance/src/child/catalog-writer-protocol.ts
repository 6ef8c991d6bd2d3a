/**
 * What the suite asks of a catalog-writer process and what it answers. The
 * suite starts it with one JSON argument (CatalogWriterRequest); the writer
 * does one run's life through a RunStore with a catalog — create, two
 * events, an interruption, a resume, a completion, release — counting every
 * statement its driver issues, to either database. With `killAt` it kills
 * itself with SIGKILL just before that statement, so the suite can look at
 * what a crash at each point leaves.
 */
import type { DriverSource, FailedMessage } from "./common.js";

export interface CatalogWriterRequest extends DriverSource {
  /** The run: created when absent. */
  readonly location: string;
  /** The store's catalog location. */
  readonly catalog: string;
  /** Kill this process just before its nth statement (1-based); absent: run to the end. */
  readonly killAt?: number;
}

export type CatalogWriterReport =
  /** Every step done and the store closed; `statements` were issued in all. */
  { readonly state: "done"; readonly statements: number } | FailedMessage;
