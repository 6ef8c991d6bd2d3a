/**
 * The workspace's part of `verify`, in two passes the run puts in its
 * report: the stored objects (./verify-objects.ts), then the trees of every
 * retained root (./verify-trees.ts). The delta chains the first rebuilds
 * are kept for the second: consecutive roots rebuild theirs from one
 * another.
 */
import type { Executor } from "../port/driver.js";
import type { HashFunctions } from "../port/hash.js";
import { retainedRoots } from "./gc.js";
import { RebuiltNodes } from "./rebuilt-nodes.js";
import type { JournalRoots } from "./root-journal.js";
import { checkObjects, type ObjectsCheck } from "./verify-objects.js";
import { checkTrees } from "./verify-trees.js";

/**
 * Told how far verify is, often: `"bytes"` while it re-hashes the stored
 * objects (done and total in bytes, moving inside a large file too), then
 * `"roots"` while it walks the retained roots (done and total in roots).
 */
export type VerifyProgress = (step: string, done: number, total: number) => void;

/** The deep check of one run's workspace, read in one snapshot. */
export class WorkspaceCheck {
  readonly #reader: Executor;
  readonly #hash: HashFunctions;
  readonly #journal: JournalRoots;
  readonly #rebuilt = new RebuiltNodes();

  constructor(reader: Executor, hash: HashFunctions, journal: JournalRoots) {
    this.#reader = reader;
    this.#hash = hash;
    this.#journal = journal;
  }

  /** Every stored object re-hashed against its address. */
  objects(progress?: VerifyProgress): Promise<ObjectsCheck> {
    return checkObjects(
      this.#reader,
      this.#hash,
      this.#rebuilt,
      progress && ((done, total) => progress("bytes", done, total)),
    );
  }

  /** Every tree the retained roots reach, checked: how many roots, and the problems found. */
  async trees(progress?: VerifyProgress): Promise<{ roots: number; problems: string[] }> {
    const roots = await retainedRoots(this.#reader, this.#journal);
    progress?.("roots", 0, roots.length);
    const problems = await checkTrees(this.#reader, this.#hash, roots, this.#rebuilt);
    progress?.("roots", roots.length, roots.length);
    return { roots: roots.length, problems };
  }
}
