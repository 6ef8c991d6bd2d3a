/**
 * The lines the lock holder and the suite exchange. The suite starts the
 * holder with one JSON argument (HolderRequest); the holder answers on stdout
 * with one JSON HolderMessage per line and takes commands on stdin, one word
 * per line.
 */
export interface HolderRequest {
  /** Module specifier (or absolute path / file: URL) that exports the driver factory. */
  readonly module: string;
  readonly exportName: string;
  /** An existing database the holder opens writable and locks. */
  readonly location: string;
  /** Statements the holder runs inside its BEGIN IMMEDIATE before it reports "holding". */
  readonly statements: readonly string[];
}

export type HolderMessage =
  | { readonly state: "holding" }
  | { readonly state: "released" }
  | { readonly state: "failed"; readonly code?: string; readonly message: string };

/** stdin commands: commit and exit, or roll back and exit. */
export type HolderCommand = "commit" | "rollback";
