/**
 * Landing one batch: one commit of one partition, in its own transaction.
 *
 * Under the write lock the batch is read again (a batch already decided —
 * by an earlier attempt, or by another process resuming the same unit — is
 * left alone: retries never write twice), its expectations are checked, and
 * then either the refusal is recorded on every still-staged batch of the
 * partition, or the commit is written: the commit row (next commit id, next
 * partition sequence), its contents into the chunk store, its ops, the live
 * key index, and the batch's state — all or nothing.
 */
import type { Intent } from "../changes/intents.js";
import type { WriteScope } from "../transaction/scope.js";
import { failedExpectations } from "./expectations.js";
import type { ExpectationFailure } from "./types.js";

export interface BatchRow {
  readonly batch: number;
  readonly partition: string;
  readonly intent: Intent;
  readonly runLast: boolean;
  readonly opCount: number;
  readonly expectCount: number;
  readonly stagedAt: number;
  readonly state: "staged" | "committed" | "refused" | "held";
}

export type BatchOutcome =
  | { readonly kind: "committed"; readonly commitId: number; readonly sequence: number }
  | { readonly kind: "refused"; readonly failures: readonly ExpectationFailure[] }
  | { readonly kind: "already_decided" };

/** How many failures a refusal records; the count is kept whole. */
export const FAILURES_KEPT = 100;

const NEXT_IDS = `SELECT (SELECT coalesce(max(commit_id), 0) + 1 FROM log_commit) AS commit_id,
  (SELECT coalesce(max(sequence), 0) + 1 FROM log_commit WHERE partition = ?) AS sequence`;

const INSERT_COMMIT = `INSERT INTO log_commit (commit_id, txn_id, batch, partition, sequence, intent,
  op_count, staged_at, committed_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)`;

const STORE_CHUNKS = `INSERT INTO chunk (digest, size, data)
SELECT o.digest, length(c.data), c.data FROM staged_op o
JOIN staged_content c ON c.txn_id = o.txn_id AND c.ref = o.content_ref
WHERE o.txn_id = ? AND o.batch = ? AND o.kind = 'put'
ON CONFLICT (digest) DO NOTHING`;

const INSERT_OPS = `INSERT INTO log_op (commit_id, ordinal, kind, key, digest, expect, expect_digest)
SELECT ?, ordinal, kind, key, digest, expect, expect_digest FROM staged_op
WHERE txn_id = ? AND batch = ? ORDER BY ordinal`;

/** Each key's last op in the batch decides its live state. */
const LAST_OPS = `SELECT key, kind, digest FROM (
  SELECT key, kind, digest, row_number() OVER (PARTITION BY key ORDER BY ordinal DESC) AS latest
  FROM staged_op WHERE txn_id = ? AND batch = ?
) WHERE latest = 1`;

const UPSERT_LIVE = `INSERT INTO live_key (partition, key, digest, sequence)
SELECT ?, key, digest, ? FROM (${LAST_OPS}) WHERE kind = 'put'
ON CONFLICT (partition, key) DO UPDATE SET digest = excluded.digest, sequence = excluded.sequence`;

/** With no tombstone in the batch, upserting every put in op order leaves each key at its last put. */
const UPSERT_PUTS_IN_ORDER = `INSERT INTO live_key (partition, key, digest, sequence)
SELECT ?, key, digest, ? FROM staged_op WHERE txn_id = ? AND batch = ? ORDER BY ordinal
ON CONFLICT (partition, key) DO UPDATE SET digest = excluded.digest, sequence = excluded.sequence`;

const HAS_TOMBSTONE = `SELECT EXISTS (SELECT 1 FROM staged_op
WHERE txn_id = ? AND batch = ? AND kind = 'tombstone') AS found`;

const DELETE_LIVE = `DELETE FROM live_key WHERE partition = ? AND key IN (
  SELECT key FROM (${LAST_OPS}) WHERE kind = 'tombstone')`;

export async function commitBatch(
  tx: WriteScope,
  txnId: string,
  batch: BatchRow,
  options: { checkWholePartition: boolean; now: number },
): Promise<BatchOutcome> {
  const current = await tx.execute("SELECT state FROM unit_batch WHERE txn_id = ? AND batch = ?", [
    txnId,
    batch.batch,
  ]);
  if (current.rows[0]?.state !== "staged") return { kind: "already_decided" };

  const failures = await check(tx, txnId, batch, options.checkWholePartition);
  if (failures.length > 0) {
    const outcome = JSON.stringify({
      reason: "expectation_failed",
      failures: failures.slice(0, FAILURES_KEPT),
      failureCount: failures.length,
    });
    await tx.execute(
      `UPDATE unit_batch SET state = 'refused', outcome = ?
WHERE txn_id = ? AND partition = ? AND state = 'staged'`,
      [outcome, txnId, batch.partition],
    );
    return { kind: "refused", failures };
  }

  const ids = (await tx.execute(NEXT_IDS, [batch.partition])).rows[0]!;
  const commitId = Number(ids.commit_id);
  const sequence = Number(ids.sequence);
  await tx.execute(INSERT_COMMIT, [
    commitId,
    txnId,
    batch.batch,
    batch.partition,
    sequence,
    batch.intent,
    batch.opCount,
    batch.stagedAt,
    options.now,
  ]);
  await tx.execute(STORE_CHUNKS, [txnId, batch.batch]);
  await tx.execute(INSERT_OPS, [commitId, txnId, batch.batch]);
  const tombstones = (await tx.execute(HAS_TOMBSTONE, [txnId, batch.batch])).rows[0]?.found;
  if (Number(tombstones) === 1) {
    await tx.execute(UPSERT_LIVE, [batch.partition, sequence, txnId, batch.batch]);
    await tx.execute(DELETE_LIVE, [batch.partition, txnId, batch.batch]);
  } else {
    await tx.execute(UPSERT_PUTS_IN_ORDER, [batch.partition, sequence, txnId, batch.batch]);
  }
  await tx.execute("UPDATE unit_batch SET state = 'committed' WHERE txn_id = ? AND batch = ?", [
    txnId,
    batch.batch,
  ]);
  return { kind: "committed", commitId, sequence };
}

async function check(
  tx: WriteScope,
  txnId: string,
  batch: BatchRow,
  wholePartition: boolean,
): Promise<ExpectationFailure[]> {
  if (wholePartition) {
    const { rows } = await tx.execute(
      `SELECT coalesce(sum(expect_count), 0) AS n FROM unit_batch
WHERE txn_id = ? AND partition = ? AND state = 'staged'`,
      [txnId, batch.partition],
    );
    if (Number(rows[0]?.n ?? 0) === 0) return [];
    return failedExpectations(tx, txnId, batch.partition, batch.batch, Number.MAX_SAFE_INTEGER);
  }
  if (batch.expectCount === 0) return [];
  return failedExpectations(tx, txnId, batch.partition, batch.batch, batch.batch);
}
