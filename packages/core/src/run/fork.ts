import type { Lease } from "../connection/lease.js";
import { RunledgerError } from "../port/errors.js";
import { toHex } from "../port/hash.js";
import { copyTree } from "../workspace/copy.js";
import { EMPTY_ROOT_ID, ROOT_FORMAT, rootId as rootIdOf } from "../workspace/identity.js";
import { rootTree } from "../workspace/workspace.js";
import { JournalReader, JournalWriter } from "./journal.js";
import { RunRecordReader } from "./run-row.js";
import type { RunContext } from "./types.js";

/** Where a fork starts: a root id, the root a journal event recorded, or (default) the current root. */
export type ForkPoint = { readonly root: string } | { readonly sequence: number } | undefined;

export interface ForkResult {
  readonly rootId: string;
  readonly sequence: number;
}

/**
 * Copies the workspace at one root of `source` into `target`, a run just
 * created and still empty, in one transaction of the target: only objects
 * that root reaches are copied, the target's current root becomes it, and
 * the target's first journal event records where it came from.
 */
export async function forkInto(
  source: Lease,
  target: Lease,
  at: ForkPoint,
  context: RunContext,
): Promise<ForkResult> {
  return source.read(async (reader) => {
    const run = await new RunRecordReader(reader).get();
    let root: string | undefined;
    let fromSequence: number | null = null;
    if (at !== undefined && "sequence" in at) {
      const event = (await new JournalReader(reader).list({ after: at.sequence - 1, limit: 1 }))[0];
      if (event === undefined || event.sequence !== at.sequence) {
        throw new RunledgerError(
          "invalid_argument",
          `the source has no journal event ${at.sequence}`,
        );
      }
      root = event.rootId;
      fromSequence = at.sequence;
    } else if (at !== undefined) {
      root = at.root;
    }
    const { root: rootBytes, tree } = await rootTree(reader, root);
    return target.transact(async (tx) => {
      const journal = new JournalWriter(tx, context);
      const current = toHex((await rootTree(tx, undefined)).root);
      if ((await journal.list({ limit: 1 })).length > 0 || current !== EMPTY_ROOT_ID) {
        throw new RunledgerError(
          "fork_target_not_empty",
          `cannot fork into ${target.location}: it already holds a run with history; choose a new location`,
        );
      }
      const copied = await copyTree(reader, tx, tree);
      const newRoot = rootIdOf(copied);
      await tx.execute(
        `INSERT INTO workspace_root (root_id, format, tree_id, created_at) VALUES (?, ?, ?, ?)
ON CONFLICT DO NOTHING`,
        [newRoot, ROOT_FORMAT, copied, context.clock()],
      );
      await tx.execute("UPDATE workspace_current SET root_id = ? WHERE singleton = 1", [newRoot]);
      const event = await journal.append({
        kind: "fork",
        from: {
          workflowId: run.workflowId,
          runId: run.runId,
          rootId: toHex(rootBytes),
          sequence: fromSequence,
        },
      });
      return { rootId: toHex(newRoot), sequence: event.sequence };
    });
  });
}
