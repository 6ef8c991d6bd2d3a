/**
 * Checking expectations. An op's expectation is about its key's state just
 * before the op: after the earlier ops on that key in the same partition and
 * unit, or, for the first such op, the live key index. One query computes
 * that state for every op that carries an expectation (a window over the
 * staged ops of the watched keys), so the check is set-based, not a
 * statement per op.
 *
 * The first time a commit reaches a partition it checks every staged batch
 * of that partition at once, so a partition whose expectation fails in its
 * third batch is refused before its first batch lands: a partition lands
 * whole or not at all. Each later batch is checked again, alone, inside its
 * own transaction (another writer may have moved the partition meanwhile).
 */
import { toHex } from "../port/bytes.js";
import type { Executor } from "../port/driver.js";
import type { ExpectationFailure } from "./types.js";

const CHECK = `WITH batches AS (
  SELECT batch FROM unit_batch
  WHERE txn_id = ? AND partition = ? AND state = 'staged' AND batch BETWEEN ? AND ?
), ops AS (
  SELECT batch, ordinal, key, kind, digest, expect, expect_digest FROM staged_op
  WHERE txn_id = ? AND batch IN (SELECT batch FROM batches)
), watched AS (
  SELECT ops.*, lag(kind) OVER w AS prior_kind, lag(digest) OVER w AS prior_digest,
    row_number() OVER w AS nth
  FROM ops WHERE key IN (SELECT key FROM ops WHERE expect IS NOT NULL)
  WINDOW w AS (PARTITION BY key ORDER BY batch, ordinal)
)
SELECT watched.key, watched.expect, watched.expect_digest,
  CASE WHEN nth > 1 THEN prior_kind = 'put' ELSE live.key IS NOT NULL END AS present,
  CASE WHEN nth > 1 THEN prior_digest ELSE live.digest END AS found_digest
FROM watched LEFT JOIN live_key live ON live.partition = ? AND live.key = watched.key
WHERE watched.expect IS NOT NULL
ORDER BY watched.batch, watched.ordinal`;

/** The failed expectations among the staged ops of `partition` in batches [from, to], in op order. */
export async function failedExpectations(
  executor: Executor,
  txnId: string,
  partition: string,
  from: number,
  to: number,
): Promise<ExpectationFailure[]> {
  const { rows } = await executor.execute(CHECK, [txnId, partition, from, to, txnId, partition]);
  const failures: ExpectationFailure[] = [];
  for (const row of rows) {
    const present = Number(row.present) === 1;
    const found = present && row.found_digest instanceof Uint8Array ? row.found_digest : null;
    const foundText = found === null ? "absent" : `sha256:${toHex(found)}`;
    let holds: boolean;
    let expected: string;
    if (row.expect === "absent") {
      holds = !present;
      expected = "absent";
    } else if (row.expect === "present") {
      holds = present;
      expected = "present";
    } else {
      expected = `sha256:${toHex(row.expect_digest as Uint8Array)}`;
      holds = foundText === expected;
    }
    if (!holds) failures.push({ key: String(row.key), expected, found: foundText });
  }
  return failures;
}
