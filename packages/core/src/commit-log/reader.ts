/**
 * Reads of a commit log, inside one snapshot: its identity, commits in log
 * order, a commit's ops, the live keys of a partition, content by digest,
 * and the units its staging area holds.
 */
import { fromHex } from "../port/bytes.js";
import type { Executor } from "../port/driver.js";
import { RunledgerError } from "../port/errors.js";
import { keysetRows } from "../port/keyset.js";
import { placeholders } from "../port/placeholders.js";
import type { Row } from "../port/values.js";
import { expectationOf, hexOrNull } from "./digests.js";
import type {
  LandedVersion,
  LiveKey,
  LogCommit,
  LogOp,
  PendingUnit,
  ReconciledKey,
} from "./types.js";
import { toLogCommit } from "./unit-rows.js";

/** Keys per statement of `landedVersions` (two parameters each). */
const LANDED_PAGE = 256;

const COMMIT_COLUMNS =
  "commit_id, txn_id, batch, partition, sequence, intent, op_count, staged_at, committed_at";

export class LogReader {
  readonly #executor: Executor;

  constructor(executor: Executor) {
    this.#executor = executor;
  }

  /** The log's own id (random, fixed at creation) and creation time. */
  async info(): Promise<{ logId: string; createdAt: number; lastCommitId: number }> {
    const { rows } = await this.#executor.execute(
      `SELECT log_id, created_at, (SELECT coalesce(max(commit_id), 0) FROM log_commit) AS last
FROM log_info WHERE singleton = 1`,
    );
    const row = rows[0];
    if (row === undefined) throw new RunledgerError("corrupt", "the log_info row is missing");
    return {
      logId: String(row.log_id),
      createdAt: Number(row.created_at),
      lastCommitId: Number(row.last),
    };
  }

  /** Commits after `after` (a commit id, default 0), in log order, at most `limit` (default 1000). */
  async commits(
    options: { after?: number; limit?: number; txnId?: string } = {},
  ): Promise<LogCommit[]> {
    const after = options.after ?? 0;
    const limit = options.limit ?? 1000;
    const { rows } =
      options.txnId === undefined
        ? await this.#executor.execute(
            `SELECT ${COMMIT_COLUMNS} FROM log_commit WHERE commit_id > ? ORDER BY commit_id LIMIT ?`,
            [after, limit],
          )
        : await this.#executor.execute(
            `SELECT ${COMMIT_COLUMNS} FROM log_commit WHERE txn_id = ? AND commit_id > ?
ORDER BY commit_id LIMIT ?`,
            [options.txnId, after, limit],
          );
    return rows.map(toLogCommit);
  }

  /** The ops of one commit, in order. */
  async ops(commitId: number): Promise<LogOp[]> {
    const { rows } = await this.#executor.execute(
      `SELECT commit_id, ordinal, kind, key, digest, expect, expect_digest FROM log_op
WHERE commit_id = ? ORDER BY ordinal`,
      [commitId],
    );
    return rows.map(toLogOp);
  }

  /**
   * One page of the ops of the commits up to `last`, in log order after
   * `after` (a commit id and an op's ordinal in it), each with its put's
   * content (`data`, null where the chunk store lacks it): what a read model
   * applies, a page at a time.
   * @internal
   */
  async opsWithContent(
    after: { readonly commitId: number; readonly ordinal: number },
    last: number,
    limit: number,
  ): Promise<Row[]> {
    const { rows } = await this.#executor.execute(
      `SELECT o.commit_id, o.ordinal, o.kind, o.key, o.digest, k.data
FROM log_op o LEFT JOIN chunk k ON k.digest = o.digest
WHERE o.commit_id >= ? AND o.commit_id <= ? AND (o.commit_id > ? OR o.ordinal > ?)
ORDER BY o.commit_id, o.ordinal LIMIT ?`,
      [after.commitId, last, after.commitId, after.ordinal, limit],
    );
    return rows;
  }

  /** Every live key of a partition, in key order. */
  async liveKeys(partition: string): Promise<LiveKey[]> {
    const { rows } = await this.#executor.execute(
      "SELECT partition, key, digest, sequence FROM live_key WHERE partition = ? ORDER BY key",
      [partition],
    );
    return rows.map(toLiveKey);
  }

  /** Every live key of the log, by partition then key. */
  async *allLiveKeys(pageSize = 1000): AsyncGenerator<LiveKey> {
    const rows = keysetRows<[string, string], Row>({
      start: ["", ""],
      page: async ([partition, key], limit) =>
        (
          await this.#executor.execute(
            `SELECT partition, key, digest, sequence FROM live_key
WHERE partition > ? OR (partition = ? AND key > ?) ORDER BY partition, key LIMIT ?`,
            [partition, partition, key, limit],
          )
        ).rows,
      keyOf: (row) => [String(row.partition), String(row.key)],
      limit: pageSize,
    });
    for await (const row of rows) yield toLiveKey(row);
  }

  /** One live key, or undefined when the partition does not hold it. */
  async liveKey(partition: string, key: string): Promise<LiveKey | undefined> {
    const { rows } = await this.#executor.execute(
      "SELECT partition, key, digest, sequence FROM live_key WHERE partition = ? AND key = ?",
      [partition, key],
    );
    return rows[0] === undefined ? undefined : toLiveKey(rows[0]);
  }

  /**
   * The latest landed version of one key: its content (from the live key
   * index and the chunk store), or `absent` when the log holds a tombstone
   * for it or never had it.
   */
  async landed(partition: string, key: string): Promise<LandedVersion> {
    return (await this.landedVersions([{ partition, key }]))[0]!;
  }

  /** `landed` of several keys at once, in the order given (one statement per 256 keys). */
  async landedVersions(
    keys: readonly { readonly partition: string; readonly key: string }[],
  ): Promise<LandedVersion[]> {
    const found = new Map<string, Row>();
    for (let at = 0; at < keys.length; at += LANDED_PAGE) {
      const page = keys.slice(at, at + LANDED_PAGE);
      const params = page.flatMap(({ partition, key }) => [partition, key]);
      const { rows } = await this.#executor.execute(
        `WITH wanted (partition, key) AS (VALUES ${placeholders(page.length, 2)})
SELECT l.partition, l.key, l.digest, l.sequence, k.data FROM wanted w
JOIN live_key l ON l.partition = w.partition AND l.key = w.key
LEFT JOIN chunk k ON k.digest = l.digest`,
        params,
      );
      for (const row of rows) found.set(`${String(row.partition)}\u0000${String(row.key)}`, row);
    }
    return keys.map(({ partition, key }): LandedVersion => {
      const row = found.get(`${partition}\u0000${key}`);
      if (row === undefined) return { partition, key, state: "absent" };
      return {
        partition,
        key,
        state: "present",
        sha256: hexOrNull(row.digest)!,
        sequence: Number(row.sequence),
        bytes: row.data instanceof Uint8Array ? row.data : undefined,
      };
    });
  }

  /** Content by its digest (hex), or undefined when the chunk store lacks it. */
  async content(sha256: string): Promise<Uint8Array | undefined> {
    if (!/^[0-9a-f]{64}$/.test(sha256)) {
      throw new RunledgerError("invalid_argument", "a content digest is 64 lower-case hex digits");
    }
    const { rows } = await this.#executor.execute("SELECT data FROM chunk WHERE digest = ?", [
      fromHex(sha256),
    ]);
    return rows[0]?.data as Uint8Array | undefined;
  }

  /** Units the staging area holds that are not done: abandoned mid-staging, or mid-commit. */
  async pendingUnits(): Promise<PendingUnit[]> {
    const { rows } = await this.#executor.execute(
      `SELECT u.txn_id, u.state, u.created_at, (SELECT count(*) FROM unit_batch b
  WHERE b.txn_id = u.txn_id) AS batches
FROM unit u WHERE u.state <> 'done' ORDER BY u.created_at, u.txn_id`,
    );
    return rows.map((row) => ({
      txnId: String(row.txn_id),
      state: row.state === "sealed" ? "sealed" : "staging",
      batches: Number(row.batches),
      createdAt: Number(row.created_at),
    }));
  }
}

function toLogOp(row: Row): LogOp {
  return {
    commitId: Number(row.commit_id),
    ordinal: Number(row.ordinal),
    op: row.kind === "put" ? "put" : "tombstone",
    key: String(row.key),
    sha256: hexOrNull(row.digest),
    expect: expectationOf(row.expect, row.expect_digest),
  };
}

function toLiveKey(row: Row): LiveKey {
  return {
    partition: String(row.partition),
    key: String(row.key),
    sha256: hexOrNull(row.digest)!,
    sequence: Number(row.sequence),
  };
}

/** What a reconciliation reports for one version it put a document back to. */
export function reconciledKey(version: LandedVersion): ReconciledKey {
  return {
    partition: version.partition,
    key: version.key,
    to: version.state === "present" ? "log-version" : "absent",
  };
}

/**
 * `chunk_missing` for a landed version whose content the chunk store lacks:
 * a document is never put back to bytes the log does not hold. `outcome`
 * ends the message (what the caller left as it was).
 */
export function landedContentMissing(
  version: Extract<LandedVersion, { state: "present" }>,
  outcome = "",
): RunledgerError {
  return new RunledgerError(
    "chunk_missing",
    `the log holds ${JSON.stringify(version.key)} in ${version.partition} with content ` +
      `${version.sha256}, which its chunk store lacks; run log.checkChunks({ source }) to ` +
      `store it again${outcome}`,
    { details: { partition: version.partition, key: version.key, sha256: version.sha256 } },
  );
}
