/**
 * The decision of a sealed unit of work, and its outcome. Every staged batch
 * is decided in order — data partitions first, run partitions last — each in
 * its own transaction (./batch-commit.ts), where a partition whose
 * expectation fails is refused whole. The run-record rule is **hold back**:
 * once any data partition of the unit was refused, none of its run
 * partitions commit; they are stored refused with reason `held_back`
 * (docs/commit-log.md says why). Every decision is stored with its batch, so
 * deciding again skips what was decided; the outcome is read back from those
 * rows, the same answer every time.
 */
import { keysetPages } from "../port/keyset.js";
import { commitBatch } from "./batch-commit.js";
import type { DatabaseAccess, LogContext } from "./context.js";
import type {
  ChunkCheck,
  CommitResult,
  CommittedPartition,
  ExpectationFailure,
  LogCommit,
  ReconciledKey,
  RefusedPartition,
} from "./types.js";
import { toBatchRow, toLogCommit } from "./unit-rows.js";

const PAGE = 512;

/** Decides every batch of the unit still `staged`, in order; holds run batches back after a refusal. */
export async function decideBatches(
  access: DatabaseAccess,
  context: LogContext,
  txnId: string,
): Promise<void> {
  const checked = new Set<string>();
  let refusedData: string[] | undefined;
  const pages = keysetPages({
    start: { runLast: -1, batch: -1 },
    page: (after, limit) =>
      access.read(async (reader) =>
        (
          await reader.execute(
            `SELECT batch, partition, intent, run_last, op_count, expect_count, staged_at, state
FROM unit_batch WHERE txn_id = ? AND state = 'staged'
  AND (run_last > ? OR (run_last = ? AND batch > ?))
ORDER BY run_last, batch LIMIT ?`,
            [txnId, after.runLast, after.runLast, after.batch, limit],
          )
        ).rows.map(toBatchRow),
      ),
    keyOf: (last) => ({ runLast: last.runLast ? 1 : 0, batch: last.batch }),
    limit: PAGE,
  });
  for await (const page of pages) {
    for (const batch of page) {
      if (batch.runLast) {
        refusedData ??= await refusedDataPartitions(access, txnId);
        if (refusedData.length > 0) return holdRunBatches(access, txnId, refusedData);
      }
      const now = context.clock();
      const whole = !checked.has(batch.partition);
      await access.transact((tx) =>
        commitBatch(tx, txnId, batch, { checkWholePartition: whole, now }),
      );
      checked.add(batch.partition);
    }
  }
}

function refusedDataPartitions(access: DatabaseAccess, txnId: string): Promise<string[]> {
  return access.read(async (reader) => {
    const { rows } = await reader.execute(
      `SELECT DISTINCT partition FROM unit_batch
WHERE txn_id = ? AND run_last = 0 AND state = 'refused' ORDER BY partition`,
      [txnId],
    );
    return rows.map((row) => String(row.partition));
  });
}

async function holdRunBatches(
  access: DatabaseAccess,
  txnId: string,
  refusedData: string[],
): Promise<void> {
  const outcome = JSON.stringify({ reason: "held_back", heldBecause: refusedData });
  await access.transact((tx) =>
    tx.execute(
      `UPDATE unit_batch SET state = 'held', outcome = ?
WHERE txn_id = ? AND run_last = 1 AND state = 'staged'`,
      [outcome, txnId],
    ),
  );
}

/** The unit's outcome as its batch rows record it: what landed, what was refused and why. */
export async function readOutcome(
  access: DatabaseAccess,
  txnId: string,
  chunks: ChunkCheck,
  reconciled: ReconciledKey[],
): Promise<CommitResult> {
  const rows = await access.read(
    async (reader) =>
      (
        await reader.execute(
          `SELECT b.batch, b.partition, b.state, b.outcome, c.commit_id, c.txn_id, c.sequence,
  c.intent, c.op_count, c.staged_at, c.committed_at
FROM unit_batch b LEFT JOIN log_commit c ON c.txn_id = b.txn_id AND c.batch = b.batch
WHERE b.txn_id = ? ORDER BY b.run_last, b.batch`,
          [txnId],
        )
      ).rows,
  );
  const committed = new Map<string, LogCommit[]>();
  const refused = new Map<string, RefusedPartition>();
  const landed = rows
    .filter((row) => row.state === "committed" && row.commit_id !== null)
    .sort((a, b) => Number(a.commit_id) - Number(b.commit_id));
  for (const row of landed) {
    const partition = String(row.partition);
    const list = committed.get(partition) ?? [];
    list.push(toLogCommit(row));
    committed.set(partition, list);
  }
  for (const row of rows) {
    if (row.state !== "refused" && row.state !== "held") continue;
    const partition = String(row.partition);
    const known = refused.get(partition);
    if (known !== undefined) {
      (known.batches as number[]).push(Number(row.batch));
      continue;
    }
    const outcome = JSON.parse(String(row.outcome ?? "{}")) as {
      reason?: string;
      failures?: ExpectationFailure[];
      failureCount?: number;
      heldBecause?: string[];
    };
    refused.set(partition, {
      partition,
      reason: row.state === "held" ? "held_back" : "expectation_failed",
      batches: [Number(row.batch)],
      failures: outcome.failures ?? [],
      failureCount: outcome.failureCount ?? 0,
      heldBecause: outcome.heldBecause ?? [],
    });
  }
  const committedList: CommittedPartition[] = [...committed].map(([partition, commits]) => ({
    partition,
    commits,
  }));
  return {
    txnId,
    committed: committedList,
    refused: [...refused.values()],
    chunks,
    reconciled,
  };
}
