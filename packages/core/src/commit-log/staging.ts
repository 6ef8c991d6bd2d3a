/**
 * The staging area: where a unit of work keeps what it staged until commit.
 *
 * A unit buffers a bounded number of ops and bytes in memory, then spills
 * them here in one transaction: the op rows, each distinct content once, and
 * the running counts of the batches they belong to. So a run that stages a
 * million ops holds at most one buffer in memory, and a staged unit survives
 * its process: after a crash the sealed unit can be resumed and committed
 * under the same txn id.
 *
 * States of a unit: `staging` (accepting changes) → `sealed` (the last spill
 * and the seal are one transaction, so a sealed unit is complete) → `done`
 * (every batch decided; the op rows and contents are deleted, the batch rows
 * stay as the unit's outcome).
 */
import { fromHex } from "../port/bytes.js";
import type { Executor } from "../port/driver.js";
import { RunledgerError } from "../port/errors.js";
import { placeholders, ROWS_PER_STATEMENT } from "../port/placeholders.js";
import type { SqlValue } from "../port/values.js";
import { expectationColumns } from "./digests.js";
import type { Placement, PlannedBatch } from "./planner.js";

export interface SpillRow {
  readonly batch: number;
  readonly ordinal: number;
  readonly kind: "put" | "tombstone";
  readonly key: string;
  readonly digest: Uint8Array | null;
  /** The staged content's `ref`, for a put. */
  readonly contentRef: number | null;
  readonly expect: string | null;
  readonly expectDigest: Uint8Array | null;
}

/** What a unit holds in memory between spills. */
export class StagingBuffer {
  rows: SpillRow[] = [];
  /** Contents new since the last spill, by hex digest (deduplicated within the buffer). */
  contents = new Map<string, { ref: number; digest: Uint8Array; data: Uint8Array }>();
  /** The next content `ref` of the unit: contents are appended in `ref` order. */
  nextRef = 0;
  /** Batches touched since the last spill (their counts are cumulative). */
  batches = new Map<number, PlannedBatch>();
  bytes = 0;

  get empty(): boolean {
    return this.rows.length === 0;
  }

  /** Forgets what was spilled; `nextRef` keeps counting. */
  clear(): void {
    this.rows = [];
    this.contents = new Map();
    this.batches = new Map();
    this.bytes = 0;
  }
}

/**
 * Adds the planner's placements of one change to the buffer: an op row each,
 * and each distinct content once (a content already buffered is referenced).
 */
export function bufferPlacements(buffer: StagingBuffer, placements: readonly Placement[]): void {
  for (const placement of placements) {
    buffer.batches.set(placement.batch.batch, placement.batch);
    let ordinal = placement.ordinal;
    for (const op of placement.ops) {
      const [expect, expectDigest] = expectationColumns(op.expect);
      let digest: Uint8Array | null = null;
      let contentRef: number | null = null;
      if (op.op === "put") {
        let content = buffer.contents.get(op.sha256);
        if (content === undefined) {
          // A copy made by the constructor: a subclass's slice need not copy
          // (Node's Buffer's is a view), and the caller may change its array.
          const data = new Uint8Array(op.bytes);
          content = { ref: buffer.nextRef++, digest: fromHex(op.sha256), data };
          buffer.contents.set(op.sha256, content);
          buffer.bytes += op.bytes.byteLength;
        }
        digest = content.digest;
        contentRef = content.ref;
      }
      buffer.rows.push({
        batch: placement.batch.batch,
        ordinal: ordinal++,
        kind: op.op,
        key: op.key,
        digest,
        contentRef,
        expect,
        expectDigest,
      });
    }
  }
}

/** Bytes of content per multi-row INSERT. */
const CONTENT_BYTES_PER_INSERT = 1 << 20;

export async function createUnit(tx: Executor, txnId: string, now: number): Promise<void> {
  const { rows } = await tx.execute("SELECT state FROM unit WHERE txn_id = ?", [txnId]);
  const used = await tx.execute("SELECT 1 AS used FROM log_commit WHERE txn_id = ? LIMIT 1", [
    txnId,
  ]);
  if (rows.length > 0 || used.rows.length > 0) {
    throw new RunledgerError(
      "unit_exists",
      `a unit of work with txn id ${JSON.stringify(txnId)} already exists in this log; ` +
        "resume it with log.resume(txnId), or begin a new unit without a txn id",
      { details: { txnId } },
    );
  }
  await tx.execute("INSERT INTO unit (txn_id, state, created_at) VALUES (?, 'staging', ?)", [
    txnId,
    now,
  ]);
}

/** Writes the buffer to the staging area; the caller's transaction makes it atomic. */
export async function spill(tx: Executor, txnId: string, buffer: StagingBuffer): Promise<void> {
  for (const batch of buffer.batches.values()) {
    await tx.execute(
      `INSERT INTO unit_batch (txn_id, batch, partition, intent, run_last, op_count, expect_count,
  staged_at, state) VALUES (?, ?, ?, ?, ?, ?, ?, ?, 'staged')
ON CONFLICT (txn_id, batch) DO UPDATE SET op_count = excluded.op_count,
  expect_count = excluded.expect_count`,
      [
        txnId,
        batch.batch,
        batch.partition,
        batch.intent,
        batch.runLast ? 1 : 0,
        batch.opCount,
        batch.expectCount,
        batch.stagedAt,
      ],
    );
  }
  const rows = buffer.rows;
  for (let start = 0; start < rows.length; start += ROWS_PER_STATEMENT) {
    const slice = rows.slice(start, start + ROWS_PER_STATEMENT);
    const params: SqlValue[] = [];
    for (const row of slice) {
      params.push(
        txnId,
        row.batch,
        row.ordinal,
        row.kind,
        row.key,
        row.digest,
        row.contentRef,
        row.expect,
        row.expectDigest,
      );
    }
    await tx.execute(
      `INSERT INTO staged_op (txn_id, batch, ordinal, kind, key, digest, content_ref, expect,
  expect_digest) VALUES ${placeholders(slice.length, 9)}`,
      params,
    );
  }
  let group: SqlValue[] = [];
  let groupBytes = 0;
  const flush = async () => {
    if (group.length === 0) return;
    await tx.execute(
      `INSERT INTO staged_content (txn_id, ref, digest, data) VALUES ${placeholders(group.length / 4, 4)}`,
      group,
    );
    group = [];
    groupBytes = 0;
  };
  for (const { ref, digest, data } of buffer.contents.values()) {
    group.push(txnId, ref, digest, data);
    groupBytes += data.byteLength;
    if (group.length / 4 >= ROWS_PER_STATEMENT || groupBytes >= CONTENT_BYTES_PER_INSERT) {
      await flush();
    }
  }
  await flush();
}

/** What a unit staged since a mark, as the staging area holds it once spilled. */
export interface StagedSinceMark {
  /** Batches numbered from here on were opened after the mark: all theirs goes. */
  readonly nextBatch: number;
  /** Contents with a ref from here on were staged after the mark. */
  readonly nextRef: number;
  /** Batches opened before the mark and filled after it: their counts at the mark. */
  readonly filled: readonly { batch: number; opCount: number; expectCount: number }[];
}

/**
 * Removes from the staging area everything staged after a mark — the ops of
 * batches opened since, the ops appended since to older batches (by
 * ordinal), their batch rows or counts, and the contents staged since — so
 * it holds exactly what it held, spilled or not, at the mark. The caller's
 * transaction makes it all or nothing.
 */
export async function discardSince(
  tx: Executor,
  txnId: string,
  since: StagedSinceMark,
): Promise<void> {
  await tx.execute("DELETE FROM staged_op WHERE txn_id = ? AND batch >= ?", [
    txnId,
    since.nextBatch,
  ]);
  await tx.execute("DELETE FROM unit_batch WHERE txn_id = ? AND batch >= ?", [
    txnId,
    since.nextBatch,
  ]);
  for (const batch of since.filled) {
    await tx.execute("DELETE FROM staged_op WHERE txn_id = ? AND batch = ? AND ordinal >= ?", [
      txnId,
      batch.batch,
      batch.opCount,
    ]);
    await tx.execute(
      "UPDATE unit_batch SET op_count = ?, expect_count = ? WHERE txn_id = ? AND batch = ?",
      [batch.opCount, batch.expectCount, txnId, batch.batch],
    );
  }
  await tx.execute("DELETE FROM staged_content WHERE txn_id = ? AND ref >= ?", [
    txnId,
    since.nextRef,
  ]);
}

/** Marks a unit sealed: nothing more is staged, and what is staged is complete. */
export async function seal(tx: Executor, txnId: string, now: number): Promise<void> {
  await tx.execute(
    "UPDATE unit SET state = 'sealed', sealed_at = ? WHERE txn_id = ? AND state = 'staging'",
    [now, txnId],
  );
}

/** Drops a unit's staged ops and contents; with `keepOutcome` its unit and batch rows stay. */
export async function clearStaging(
  tx: Executor,
  txnId: string,
  keepOutcome: { now: number } | undefined,
): Promise<void> {
  await tx.execute("DELETE FROM staged_op WHERE txn_id = ?", [txnId]);
  await tx.execute("DELETE FROM staged_content WHERE txn_id = ?", [txnId]);
  if (keepOutcome === undefined) {
    await tx.execute("DELETE FROM unit_batch WHERE txn_id = ?", [txnId]);
    await tx.execute("DELETE FROM unit WHERE txn_id = ?", [txnId]);
  } else {
    await tx.execute("UPDATE unit SET state = 'done', done_at = ? WHERE txn_id = ?", [
      keepOutcome.now,
      txnId,
    ]);
  }
}
