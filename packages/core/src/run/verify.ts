/**
 * The deep check, O(data) and explicit (opening never does this), composed
 * of its owners' checks in the order of its report: the file, as SQLite
 * proves it (integrity, foreign keys, every CHECK row by row:
 * ../schema/integrity.ts); the journal's rows (gap-free, unique event ids,
 * the digest chain: ./journal-check.ts); every stored object re-hashed; the
 * roots events hold re-hashed against the ids they record; and every tree
 * the retained roots reach, reference by reference (../workspace/verify.ts).
 */
import type { Executor } from "../port/driver.js";
import type { HashFunctions } from "../port/hash.js";
import { fileProblems } from "../schema/integrity.js";
import { type VerifyProgress, WorkspaceCheck } from "../workspace/verify.js";
import { checkHeldRoots, checkJournal } from "./journal-check.js";
import { JOURNAL_ROOTS } from "./journal-roots.js";
import { SCHEMA_V1 } from "./schema-v1.js";

/** What `lease.verify()` answers: whether the run is sound, every problem found, and what it checked. */
export interface VerifyReport {
  readonly ok: boolean;
  /** One line per problem found; empty when ok. */
  readonly problems: string[];
  readonly counts: {
    readonly events: number;
    /** Objects re-hashed: directory nodes and files. */
    readonly objects: number;
    /** Pieces of large files re-hashed. */
    readonly chunks: number;
    /** Distinct roots retained (journal and pins). */
    readonly roots: number;
  };
}

export async function verifyRun(
  reader: Executor,
  hash: HashFunctions,
  progress?: VerifyProgress,
): Promise<VerifyReport> {
  const file = await fileProblems(reader, SCHEMA_V1);
  const journal = await checkJournal(reader, hash);
  const workspace = new WorkspaceCheck(reader, hash, JOURNAL_ROOTS);
  const objects = await workspace.objects(progress);
  const held = await checkHeldRoots(reader, hash);
  const trees = await workspace.trees(progress);
  const problems = [...file, ...journal.problems, ...objects.problems, ...held, ...trees.problems];
  return {
    ok: problems.length === 0,
    problems,
    counts: {
      events: journal.events,
      objects: objects.objects,
      chunks: objects.chunks,
      roots: trees.roots,
    },
  };
}
