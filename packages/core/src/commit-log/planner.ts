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
 *
 * A mark (`mark()` … `rollBack(mark)` or `release(mark)`) makes placements
 * provisional: while it is open the planner records, for each partition it
 * touches, that partition's newest batch and its counts as they were, so a
 * rollback restores exactly the plan at the mark (O(partitions touched)).
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

/** The plan as it was when a mark was taken, recorded lazily per partition touched. */
export interface PlannerMark {
  /** The first batch number opened after the mark. */
  readonly nextBatch: number;
  /** Each partition touched since the mark: its newest batch then, and that batch's counts. */
  readonly prior: Map<string, PriorBatch>;
}

export interface PriorBatch {
  readonly batch: PlannedBatch | undefined;
  readonly opCount: number;
  readonly expectCount: number;
}

export class BatchPlanner {
  #nextBatch: number;
  readonly #newest = new Map<string, PlannedBatch>();
  #mark: PlannerMark | undefined;

  constructor(nextBatch = 0) {
    this.#nextBatch = nextBatch;
  }

  /** How many batches have been opened. */
  get batchCount(): number {
    return this.#nextBatch;
  }

  /** Starts recording what placements change, so that `rollBack` can undo them. One at a time. */
  mark(): PlannerMark {
    this.#mark = { nextBatch: this.#nextBatch, prior: new Map() };
    return this.#mark;
  }

  /** Keeps every placement made since the mark. */
  release(mark: PlannerMark): void {
    if (this.#mark === mark) this.#mark = undefined;
  }

  /** Undoes every placement made since the mark. */
  rollBack(mark: PlannerMark): void {
    for (const [partition, prior] of mark.prior) {
      if (prior.batch === undefined) {
        this.#newest.delete(partition);
      } else {
        prior.batch.opCount = prior.opCount;
        prior.batch.expectCount = prior.expectCount;
        this.#newest.set(partition, prior.batch);
      }
    }
    this.#nextBatch = mark.nextBatch;
    if (this.#mark === mark) this.#mark = undefined;
  }

  place(change: TypedChange, now: number): Placement[] {
    const { ops, partition, intent } = change;
    const newest = this.#newest.get(partition);
    if (this.#mark !== undefined && !this.#mark.prior.has(partition)) {
      this.#mark.prior.set(partition, {
        batch: newest,
        opCount: newest?.opCount ?? 0,
        expectCount: newest?.expectCount ?? 0,
      });
    }
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
