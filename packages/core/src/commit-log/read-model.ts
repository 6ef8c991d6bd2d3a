/**
 * The read model: a second database that follows one commit log. `catchUp`
 * applies the log's commits after the stored cursor, in log order, into the
 * documents and the catalog.
 *
 * - Incremental: it starts after the cursor and stops at the last commit the
 *   log held when it started.
 * - Idempotent: each read-model transaction applies whole commits and moves
 *   the cursor in the same transaction, so a crash anywhere leaves either the
 *   commits applied and the cursor past them, or neither. Running it twice,
 *   or again after a crash, gives the same documents and catalog.
 * - Bound to one log: the first catch-up records the log's id; catching up
 *   from another log is refused (`read_model_mismatch`).
 * - Bounded: it holds one page of ops (and their contents) at a time. A
 *   page is reduced to each key's last op (every op replaces its key's whole
 *   state) and written with multi-row statements.
 */

import { toHex } from "../port/bytes.js";
import type { Executor } from "../port/driver.js";
import { RunledgerError } from "../port/errors.js";
import { keysetPages, keysetRows } from "../port/keyset.js";
import { checkNames } from "../port/options.js";
import { placeholders, ROWS_PER_STATEMENT } from "../port/placeholders.js";
import type { Row, SqlValue } from "../port/values.js";
import type { DatabaseAccess } from "./context.js";
import type { CommitLog } from "./log.js";
import type { LogCommit } from "./types.js";

export interface CatchUpOptions {
  /** Ops applied per read-model transaction, rounded up to whole commits (default 20,000). */
  readonly opsPerTransaction?: number;
  /** Ops read from the log per page (default 2,000). */
  readonly pageSize?: number;
}

export interface CatchUpResult {
  /** Commits applied by this call. */
  readonly commits: number;
  /** Ops applied by this call. */
  readonly ops: number;
  /** The last commit applied, now or before (the cursor). */
  readonly appliedCommit: number;
}

/** A catalog row: a live key, its content digest, the sequence and intent of the commit that wrote it. */
export interface CatalogRow {
  readonly partition: string;
  readonly key: string;
  readonly sha256: string;
  readonly sequence: number;
  readonly intent: string;
}

const BYTES_PER_STATEMENT = 1 << 20;

export class ReadModel {
  readonly #access: DatabaseAccess;
  readonly #release: () => Promise<void>;

  /** @internal Opened through ReadModelStore. */
  constructor(access: DatabaseAccess, release: () => Promise<void>) {
    this.#access = access;
    this.#release = release;
  }

  get location(): string {
    return this.#access.location;
  }

  async catchUp(log: CommitLog, options: CatchUpOptions = {}): Promise<CatchUpResult> {
    checkNames(options, ["opsPerTransaction", "pageSize"], "catchUp's options");
    const budget = options.opsPerTransaction ?? 20_000;
    const pageSize = options.pageSize ?? 2_000;
    const source = await log.read((reader) => reader.info());
    let commits = 0;
    let ops = 0;
    for (;;) {
      const step = await this.#access.transact(async (tx) => {
        const applied = await this.#cursor(tx, source.logId);
        if (applied >= source.lastCommitId) return { applied, commits: 0, ops: 0 };
        const pending = await log.read((reader) => reader.commits({ after: applied, limit: 1000 }));
        const batch: LogCommit[] = [];
        let batchOps = 0;
        for (const commit of pending) {
          if (commit.commitId > source.lastCommitId) break;
          if (batch.length > 0 && batchOps + commit.opCount > budget) break;
          batch.push(commit);
          batchOps += commit.opCount;
        }
        await applyCommits(tx, log, batch, pageSize);
        const last = batch[batch.length - 1]!.commitId;
        await tx.execute("UPDATE read_model_cursor SET applied_commit = ? WHERE singleton = 1", [
          last,
        ]);
        return { applied: last, commits: batch.length, ops: batchOps };
      });
      commits += step.commits;
      ops += step.ops;
      if (step.commits === 0) return { commits, ops, appliedCommit: step.applied };
    }
  }

  /** Reads in one consistent snapshot. */
  read<T>(fn: (reader: ReadModelReader) => Promise<T>): Promise<T> {
    return this.#access.read((scope) => fn(new ReadModelReader(scope)));
  }

  release(): Promise<void> {
    return this.#release();
  }

  [Symbol.asyncDispose](): Promise<void> {
    return this.release();
  }

  /** The cursor, binding the model to the log on its first catch-up. */
  async #cursor(tx: Executor, logId: string): Promise<number> {
    const row = (
      await tx.execute("SELECT log_id, applied_commit FROM read_model_cursor WHERE singleton = 1")
    ).rows[0]!;
    if (row.log_id === null) {
      await tx.execute("UPDATE read_model_cursor SET log_id = ? WHERE singleton = 1", [logId]);
      return 0;
    }
    if (row.log_id !== logId) {
      throw new RunledgerError(
        "read_model_mismatch",
        `the read model at ${this.#access.location} follows log ${String(row.log_id)}, not ` +
          `log ${logId}; catch up a new read model from this log`,
        { details: { follows: row.log_id, log: logId } },
      );
    }
    return Number(row.applied_commit);
  }
}

/** Applies whole commits, reading their ops from the log a page at a time. */
async function applyCommits(
  tx: Executor,
  log: CommitLog,
  commits: readonly LogCommit[],
  pageSize: number,
): Promise<void> {
  const byId = new Map(commits.map((commit) => [commit.commitId, commit]));
  const first = commits[0]!.commitId;
  const last = commits[commits.length - 1]!.commitId;
  const pages = keysetPages({
    start: { commitId: first, ordinal: -1 },
    page: (after, limit) => log.read((reader) => reader.opsWithContent(after, last, limit)),
    keyOf: (row) => ({ commitId: Number(row.commit_id), ordinal: Number(row.ordinal) }),
    limit: pageSize,
  });
  for await (const rows of pages) await applyOps(tx, rows, byId);
}

/**
 * Applies one page of ops. Each op replaces its key's whole state, so the
 * page's effect is each key's last op: the page is reduced to that, then
 * written as multi-row upserts (keys whose last op is a put) and multi-row
 * deletes (keys whose last op is a tombstone) — one key appears once, so the
 * two groups commute.
 */
async function applyOps(tx: Executor, rows: Row[], commits: Map<number, LogCommit>) {
  const last = new Map<string, Row>();
  for (const row of rows) {
    const partition = commits.get(Number(row.commit_id))!.partition;
    const id = `${partition}\u0000${String(row.key)}`;
    last.delete(id);
    last.set(id, row);
  }
  const puts: Row[] = [];
  const tombstones: Row[] = [];
  for (const row of last.values()) (row.kind === "put" ? puts : tombstones).push(row);
  let group: Row[] = [];
  let bytes = 0;
  for (const row of puts) {
    group.push(row);
    bytes += (row.data as Uint8Array | null)?.byteLength ?? 0;
    if (group.length >= ROWS_PER_STATEMENT || bytes >= BYTES_PER_STATEMENT) {
      await applyPuts(tx, group, commits);
      group = [];
      bytes = 0;
    }
  }
  if (group.length > 0) await applyPuts(tx, group, commits);
  for (let at = 0; at < tombstones.length; at += ROWS_PER_STATEMENT) {
    await applyTombstones(tx, tombstones.slice(at, at + ROWS_PER_STATEMENT), commits);
  }
}

async function applyPuts(tx: Executor, rows: Row[], commits: Map<number, LogCommit>) {
  const catalog: SqlValue[] = [];
  const documents: SqlValue[] = [];
  for (const row of rows) {
    const commit = commits.get(Number(row.commit_id))!;
    if (!(row.data instanceof Uint8Array)) {
      const sha256 = toHex(row.digest as Uint8Array);
      throw new RunledgerError(
        "chunk_missing",
        `commit ${commit.commitId} puts ${JSON.stringify(String(row.key))} in ${commit.partition} ` +
          `with content ${sha256}, which the log's chunk store lacks; run log.checkChunks({ source }) ` +
          "to store it again, then catch up",
        { details: { commitId: commit.commitId, key: row.key, sha256 } },
      );
    }
    catalog.push(commit.partition, row.key!, row.digest!, commit.sequence, commit.intent);
    documents.push(commit.partition, row.key!, row.data);
  }
  await tx.execute(
    `INSERT INTO catalog (partition, key, digest, sequence, intent) VALUES ${placeholders(rows.length, 5)}
ON CONFLICT (partition, key) DO UPDATE SET digest = excluded.digest, sequence = excluded.sequence,
  intent = excluded.intent`,
    catalog,
  );
  await tx.execute(
    `INSERT INTO document (partition, key, data) VALUES ${placeholders(rows.length, 3)}
ON CONFLICT (partition, key) DO UPDATE SET data = excluded.data`,
    documents,
  );
}

async function applyTombstones(tx: Executor, rows: Row[], commits: Map<number, LogCommit>) {
  const keys: SqlValue[] = [];
  for (const row of rows) keys.push(commits.get(Number(row.commit_id))!.partition, row.key!);
  const list = placeholders(rows.length, 2);
  await tx.execute(`DELETE FROM catalog WHERE (partition, key) IN (VALUES ${list})`, keys);
  await tx.execute(`DELETE FROM document WHERE (partition, key) IN (VALUES ${list})`, keys);
}

export class ReadModelReader {
  readonly #executor: Executor;

  constructor(executor: Executor) {
    this.#executor = executor;
  }

  /** Which log the model follows (null before its first catch-up) and the last commit applied. */
  async cursor(): Promise<{ logId: string | null; appliedCommit: number }> {
    const row = (
      await this.#executor.execute(
        "SELECT log_id, applied_commit FROM read_model_cursor WHERE singleton = 1",
      )
    ).rows[0]!;
    return {
      logId: row.log_id === null ? null : String(row.log_id),
      appliedCommit: Number(row.applied_commit),
    };
  }

  /** One document's bytes, or undefined. */
  async document(partition: string, key: string): Promise<Uint8Array | undefined> {
    const { rows } = await this.#executor.execute(
      "SELECT data FROM document WHERE partition = ? AND key = ?",
      [partition, key],
    );
    return rows[0]?.data as Uint8Array | undefined;
  }

  /** One catalog row, or undefined. */
  async catalogRow(partition: string, key: string): Promise<CatalogRow | undefined> {
    const { rows } = await this.#executor.execute(
      "SELECT partition, key, digest, sequence, intent FROM catalog WHERE partition = ? AND key = ?",
      [partition, key],
    );
    return rows[0] === undefined ? undefined : toCatalogRow(rows[0]);
  }

  /** Catalog rows by partition then key, a page at a time; `partition` narrows to one. */
  async *catalog(
    options: { partition?: string; pageSize?: number } = {},
  ): AsyncGenerator<CatalogRow> {
    const { partition: only } = options;
    const rows = keysetRows<[string, string], Row>({
      start: [only ?? "", ""],
      page: async ([partition, key], limit) =>
        (only === undefined
          ? await this.#executor.execute(
              `SELECT partition, key, digest, sequence, intent FROM catalog
WHERE partition > ? OR (partition = ? AND key > ?) ORDER BY partition, key LIMIT ?`,
              [partition, partition, key, limit],
            )
          : await this.#executor.execute(
              `SELECT partition, key, digest, sequence, intent FROM catalog
WHERE partition = ? AND key > ? ORDER BY key LIMIT ?`,
              [only, key, limit],
            )
        ).rows,
      keyOf: (row) => [String(row.partition), String(row.key)],
      limit: options.pageSize ?? 1000,
    });
    for await (const row of rows) yield toCatalogRow(row);
  }

  /** Documents by partition then key, a page at a time. */
  async *documents(
    pageSize = 200,
  ): AsyncGenerator<{ partition: string; key: string; data: Uint8Array }> {
    const rows = keysetRows<[string, string], Row>({
      start: ["", ""],
      page: async ([partition, key], limit) =>
        (
          await this.#executor.execute(
            `SELECT partition, key, data FROM document
WHERE partition > ? OR (partition = ? AND key > ?) ORDER BY partition, key LIMIT ?`,
            [partition, partition, key, limit],
          )
        ).rows,
      keyOf: (row) => [String(row.partition), String(row.key)],
      limit: pageSize,
    });
    for await (const row of rows) {
      yield {
        partition: String(row.partition),
        key: String(row.key),
        data: row.data as Uint8Array,
      };
    }
  }
}

function toCatalogRow(row: Row): CatalogRow {
  return {
    partition: String(row.partition),
    key: String(row.key),
    sha256: toHex(row.digest as Uint8Array),
    sequence: Number(row.sequence),
    intent: String(row.intent),
  };
}
