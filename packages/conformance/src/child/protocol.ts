/**
 * The lines the lock holder and the suite exchange. The suite starts the
 * holder with one JSON argument (HolderRequest); the holder answers on stdout
 * with one JSON HolderMessage per line and takes commands on stdin, one word
 * per line.
 */
import type { DriverSource, FailedMessage } from "./common.js";

export interface HolderRequest extends DriverSource {
  /** An existing database the holder opens writable and locks. */
  readonly location: string;
  /** Statements the holder runs inside its BEGIN IMMEDIATE before it reports "holding". */
  readonly statements: readonly string[];
}

export type HolderMessage =
  | { readonly state: "holding" }
  | { readonly state: "released" }
  | FailedMessage;

/** stdin commands: commit and exit, or roll back and exit. */
export type HolderCommand = "commit" | "rollback";
