/**
 * `RunStore.fork`: a new run that starts from another run's workspace at a
 * chosen root, copying only what that root reaches.
 */
import type { Lease } from "../connection/lease.js";
import { toHex } from "../port/bytes.js";
import { RunledgerError } from "../port/errors.js";
import { copyRoot } from "../workspace/copy.js";
import { EMPTY_ROOT_ID, EMPTY_ROOT_ID_BYTES } from "../workspace/node-encoding.js";
import { NodeLoader } from "../workspace/node-loader.js";
import { currentRootId, parseRootId } from "../workspace/reader.js";
import type { ApplyResult } from "../workspace/root-journal.js";
import type { RootPoint } from "../workspace/sources.js";
import { digestOf, SET_ANCHOR } from "./chain.js";
import { JournalWriter, journalText } from "./journal.js";
import { JournalReader } from "./journal-reader.js";
import { JOURNAL_ROOTS } from "./journal-roots.js";
import { RunRecordReader } from "./run-row.js";
import type { RunContext } from "./types.js";

/** Where a fork starts: a root of the source (by id or by the event that recorded it), or its current one. */
export type ForkPoint = RootPoint | undefined;

/** Where the fork's workspace starts: the target's first event, and the root it holds (hex). */
export type ForkResult = ApplyResult;

/**
 * Copies the workspace at one root of `source` into the target, a run
 * created by `openTarget` once that root is found, and still empty, in one
 * transaction of the target: only objects
 * that root reaches are copied, the target's current root becomes it, and
 * the target's first journal event records where it came from — and chains
 * from the source's digest there (the anchor row says so: ./chain.ts).
 */
export async function forkInto(
  source: Lease,
  openTarget: () => Promise<Lease>,
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
    const rootId =
      root === undefined ? await currentRootId(reader, JOURNAL_ROOTS) : parseRootId(root);
    // What the target's first event chains from: the event forked at, else the source's newest.
    const sourceDigest = (await digestOf(reader, fromSequence ?? undefined))!;
    // A named root is checked as every read checks it: a directory node this run holds.
    if (root !== undefined) {
      const loader = new NodeLoader(reader, context.workspace.nodes, JOURNAL_ROOTS);
      await loader.root(rootId, { named: root });
    }
    // Only a point the source has opens (and so creates) the target: a refused one writes nothing.
    const target = await openTarget();
    return target.transact(async (tx) => {
      const journal = new JournalWriter(tx, context);
      const current = toHex(await currentRootId(tx, JOURNAL_ROOTS));
      if ((await journal.list({ limit: 1 })).length > 0 || current !== EMPTY_ROOT_ID) {
        throw new RunledgerError(
          "fork_target_not_empty",
          `cannot fork into ${target.location}: it already holds a run with history; choose a new location`,
        );
      }
      const { rootBytes } = await copyRoot(reader, JOURNAL_ROOTS, tx, rootId);
      await tx.execute(SET_ANCHOR, [1, sourceDigest]);
      const event = await journal.publish(
        journalText({
          kind: "fork",
          from: {
            workflowId: run.workflowId,
            runId: run.runId,
            rootId: toHex(rootId),
            sequence: fromSequence,
            digest: toHex(sourceDigest),
          },
        }),
        { sequence: 0, root: EMPTY_ROOT_ID_BYTES, digest: sourceDigest },
        rootId,
        rootBytes,
      );
      if (event === undefined) {
        throw new RunledgerError(
          "fork_target_not_empty",
          `cannot fork into ${target.location}: another writer wrote to it first; choose a new location`,
        );
      }
      return { rootId: toHex(rootId), sequence: event.sequence };
    });
  });
}
