/**
 * Row mapping for the unit of work and the log reader: a `unit_batch` row, a
 * `log_commit` row and a `staged_op` row as the values the API hands out. Its
 * own module so that the reader and the unit both use it without importing
 * each other.
 */
import type { Row } from "../port/values.js";
import type { BatchRow } from "./batch-commit.js";
import { expectationOf, hexOrNull } from "./digests.js";
import type { LogCommit, StagedOp } from "./types.js";

export function toBatchRow(row: Row): BatchRow {
  return {
    batch: Number(row.batch),
    partition: String(row.partition),
    intent: row.intent as BatchRow["intent"],
    runLast: Number(row.run_last) === 1,
    opCount: Number(row.op_count),
    expectCount: Number(row.expect_count),
    stagedAt: Number(row.staged_at),
    state: row.state as BatchRow["state"],
  };
}

export function toLogCommit(row: Row): LogCommit {
  return {
    commitId: Number(row.commit_id),
    txnId: String(row.txn_id),
    batch: Number(row.batch),
    partition: String(row.partition),
    sequence: Number(row.sequence),
    intent: row.intent as LogCommit["intent"],
    opCount: Number(row.op_count),
    stagedAt: Number(row.staged_at),
    committedAt: Number(row.committed_at),
  };
}

export function toStagedOp(row: Row): StagedOp {
  return {
    batch: Number(row.batch),
    ordinal: Number(row.ordinal),
    partition: String(row.partition),
    intent: row.intent as StagedOp["intent"],
    op: row.kind === "put" ? "put" : "tombstone",
    key: String(row.key),
    sha256: hexOrNull(row.digest),
    expect: expectationOf(row.expect, row.expect_digest),
  };
}
