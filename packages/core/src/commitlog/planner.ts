/**
 * The batch plan of a unit of work, decided as changes are staged:
 *
 * - every partition's ops keep their staging order;
 * - a batch holds the ops of one partition and one intent, at most
 *   MAX_COMMIT_OPS of them: it becomes one commit;
 * - a change joins its partition's newest batch when that batch has the same
 *   intent and room for the whole change, so a long run's many small
 *   updates land in few commits; otherwise it opens a new batch, and a
 *   change larger than MAX_COMMIT_OPS is split into full batches in order;
 * - batches are numbered in the order they are opened, and commit in that
 *   order, except that run partitions' batches all come last.
 *
 * The planner remembers only each partition's newest batch: its memory is
 * O(partitions), never O(ops).
 */
import { MAX_COMMIT_OPS } from "../changes/batches.js";
import type { TypedChange } from "../changes/change.js";
import type { Intent } from "../changes/intents.js";
import type { ChangeOp } from "../changes/ops.js";
import { isRunPartition } from "../changes/partitions.js";

export interface PlannedBatch {
  readonly batch: number;
  readonly partition: string;
  readonly intent: Intent;
  readonly runLast: boolean;
  readonly stagedAt: number;
  opCount: number;
  expectCount: number;
}

/** A run of a change's ops placed in one batch, from `ordinal` on. */
export interface Placement {
  readonly batch: PlannedBatch;
  readonly ordinal: number;
  readonly ops: readonly ChangeOp[];
}

export class BatchPlanner {
  #nextBatch: number;
  readonly #newest = new Map<string, PlannedBatch>();

  constructor(nextBatch = 0) {
    this.#nextBatch = nextBatch;
  }

  /** How many batches have been opened. */
  get batchCount(): number {
    return this.#nextBatch;
  }

  place(change: TypedChange, now: number): Placement[] {
    const { ops, partition, intent } = change;
    const newest = this.#newest.get(partition);
    if (
      newest !== undefined &&
      newest.intent === intent &&
      newest.opCount + ops.length <= MAX_COMMIT_OPS
    ) {
      return [this.#fill(newest, ops)];
    }
    const placements: Placement[] = [];
    for (let start = 0; start < ops.length; start += MAX_COMMIT_OPS) {
      const batch: PlannedBatch = {
        batch: this.#nextBatch++,
        partition,
        intent,
        runLast: isRunPartition(partition),
        stagedAt: now,
        opCount: 0,
        expectCount: 0,
      };
      this.#newest.set(partition, batch);
      placements.push(this.#fill(batch, ops.slice(start, start + MAX_COMMIT_OPS)));
    }
    return placements;
  }

  #fill(batch: PlannedBatch, ops: readonly ChangeOp[]): Placement {
    const placement = { batch, ordinal: batch.opCount, ops };
    batch.opCount += ops.length;
    for (const op of ops) if (op.expect !== undefined) batch.expectCount++;
    return placement;
  }
}
