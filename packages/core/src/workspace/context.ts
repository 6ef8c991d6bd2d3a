/**
 * What the workspace of every run of one store shares: the node cache, the
 * hash it writes with, and the journal that records its roots.
 */
import type { HashFunctions } from "../port/hash.js";
import type { NodeCache } from "./node-cache.js";
import type { JournalRoots } from "./root-journal.js";

/** What workspace reads and writes share, per store. */
export interface WorkspaceContext {
  readonly nodes: NodeCache;
  /** The hash new content and nodes are addressed with. */
  readonly hash: HashFunctions;
  /** The roots the run's journal records (its run hands it in). */
  readonly journal: JournalRoots;
}
