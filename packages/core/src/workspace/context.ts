/**
 * What the workspace of every run of one store shares.
 */
import type { HashFunctions } from "../port/hash.js";
import type { NodeCache } from "./node-cache.js";

/** What workspace reads and writes share, per store: the node cache, and the hash for writing. */
export interface WorkspaceContext {
  readonly nodes: NodeCache;
  readonly hash: HashFunctions;
}
