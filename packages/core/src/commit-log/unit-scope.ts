/**
 * Provisional staging for a unit of work (`unit.openScope()`): a scope marks
 * where the unit stood — its buffer, its batch plan, its spill count — and
 * `discard()` returns the unit exactly there. When nothing spilled since the
 * mark, that is truncating the buffer; when a spill did, what the spills
 * wrote is deleted from the staging area in one transaction
 * (./staging.ts `discardSince`). The unit decides what a failed discard
 * means (it turns `incomplete`); this module only moves the unit back.
 */
import type { TypedChange } from "../changes/change.js";
import type { RunledgerError } from "../port/errors.js";
import type { DatabaseAccess } from "./context.js";
import type { BatchPlanner, PlannerMark } from "./planner.js";
import { discardSince, type StagingBuffer } from "./staging.js";
import type { StagingScope } from "./types.js";

/** Where a unit stood when a scope opened. */
export interface UnitMark {
  readonly planner: PlannerMark;
  readonly rows: number;
  readonly bytes: number;
  readonly nextRef: number;
  readonly spills: number;
}

/** The parts of a unit a scope marks and moves back. */
export interface ScopedParts {
  readonly txnId: string;
  readonly access: DatabaseAccess;
  readonly planner: BatchPlanner;
  readonly buffer: StagingBuffer;
  /** Spills so far. */
  readonly spills: number;
}

export function markOf(unit: ScopedParts): UnitMark {
  return {
    planner: unit.planner.mark(),
    rows: unit.buffer.rows.length,
    bytes: unit.buffer.bytes,
    nextRef: unit.buffer.nextRef,
    spills: unit.spills,
  };
}

/**
 * Returns the unit to where it stood at `mark`, in memory and in the staging
 * area. Throws, having changed nothing in memory, when deleting spilled rows fails.
 */
export async function rollBackTo(unit: ScopedParts, mark: UnitMark): Promise<void> {
  const { buffer } = unit;
  if (unit.spills === mark.spills) {
    // Everything staged since the mark is still in the buffer, after its first mark.rows rows.
    buffer.rows.length = mark.rows;
    for (const [sha256, content] of buffer.contents) {
      if (content.ref >= mark.nextRef) buffer.contents.delete(sha256);
    }
    for (const batch of buffer.batches.keys()) {
      if (batch >= mark.planner.nextBatch) buffer.batches.delete(batch);
    }
    buffer.bytes = mark.bytes;
  } else {
    // A spill since the mark wrote some of it to the staging area; the
    // buffer holds only what came after that spill, all of it since the mark.
    const filled = [...mark.planner.prior.values()].flatMap((prior) =>
      prior.batch === undefined
        ? []
        : [{ batch: prior.batch.batch, opCount: prior.opCount, expectCount: prior.expectCount }],
    );
    const since = { nextBatch: mark.planner.nextBatch, nextRef: mark.nextRef, filled };
    await unit.access.transact((tx) => discardSince(tx, unit.txnId, since));
    buffer.clear();
  }
  buffer.nextRef = mark.nextRef;
  unit.planner.rollBack(mark.planner);
}

/** What a scope asks of its unit. */
export interface ScopeHooks {
  /** Stages now (the scope already holds the unit's turn). */
  stage(changes: TypedChange | readonly TypedChange[]): Promise<void>;
  /** Keeps what was staged since the mark. */
  confirm(): void;
  /** Removes what was staged since the mark. */
  discard(): Promise<void>;
  /** The refusal for staging through a scope that has ended. */
  ended(): RunledgerError;
}

/**
 * A scope over hooks: its own calls take turns with each other, and after
 * confirm or discard it stages nothing. `end` gives the unit its turn back.
 */
export function stagingScope(hooks: ScopeHooks, end: () => void): StagingScope {
  let open = true;
  let tail: Promise<unknown> = Promise.resolve();
  const inTurn = <T>(operation: () => Promise<T>): Promise<T> => {
    const turn = tail.then(operation);
    tail = turn.catch(() => undefined);
    return turn;
  };
  const close = () => {
    open = false;
    end();
  };
  return {
    stage: (changes) =>
      inTurn(async () => {
        if (!open) throw hooks.ended();
        await hooks.stage(changes);
      }),
    confirm: () =>
      inTurn(async () => {
        if (!open) return;
        hooks.confirm();
        close();
      }),
    discard: () =>
      inTurn(async () => {
        if (!open) return;
        try {
          await hooks.discard();
        } finally {
          close();
        }
      }),
  };
}
