/**
 * A unit of work on the commit log: `stage(change)` as the work happens,
 * then `commit()` once (or `abandon()`).
 *
 * - Staging checks each change whole (`invalid_change`), places it in the
 *   batch plan (./planner.ts) and keeps it in a bounded buffer that spills
 *   to the log's staging area (./staging.ts). `stage` either stages the
 *   change or throws and stages nothing.
 * - `commit` seals the unit (the last spill and the seal are one
 *   transaction), then decides every batch in order — data partitions
 *   first, run partitions last — each in its own transaction
 *   (./batch-commit.ts). A partition whose expectation fails is refused
 *   whole; the others still commit.
 * - The run-record rule is **hold back**: if any data partition of the unit
 *   was refused, none of the unit's run partitions commit; they are
 *   reported refused with reason `held_back`. A run record therefore never
 *   names data whose partition was refused (docs/commit-log.md says why).
 * - Every decision is stored with the batch, so committing again — after an
 *   error, or in another process after a crash (`log.resume(txnId)`) — keeps
 *   the txn id, skips what landed or was refused, and lands only the rest.
 * - `openScope()` stages provisionally: the scope marks where the unit
 *   stood (buffer, batch plan, spill count), and `discard()` returns the
 *   unit exactly there — truncating the buffer, or, when a spill happened
 *   since, deleting what the spills wrote (./staging.ts `discardSince`) in
 *   one transaction. Scopes take turns with every other operation of the
 *   unit, so nothing else is staged between a mark and its discard. A
 *   discard that could not remove spilled rows leaves the unit `incomplete`:
 *   it can then only be abandoned, never commit a change nobody wrote.
 * - After the batches, the chunk check (./chunks.ts) re-stores any missing
 *   content; then the staged ops and contents are deleted and the unit is
 *   done. Its batch rows stay as its outcome, so a later commit() or resume
 *   answers the same result.
 * - Reconciliation: a datastore hook the unit was bound to attaches its
 *   DocumentReconciler (`attachReconciler`). The datastore already holds
 *   every document the unit staged, so where a staged change does not land
 *   the document is put back to what the log holds: after commit, every key
 *   of a refused or held-back partition; on abandon, every key staged. The
 *   keys are read from the staged ops (buffer and staging area) before they
 *   are deleted, a page at a time; a failed reconciliation
 *   (`reconcile_failed`) leaves the staged ops in place, so commit() or
 *   abandon() again reconciles again (it is idempotent).
 */
import { checkChange, type TypedChange } from "../changes/change.js";
import { RunledgerError } from "../port/errors.js";
import { fromHex, sha256Hex } from "../port/hash.js";
import type { Row } from "../port/values.js";
import { type BatchRow, commitBatch } from "./batch-commit.js";
import { checkChunks } from "./chunks.js";
import type { DatabaseAccess, LogContext } from "./context.js";
import { expectationColumns, expectationOf, hexOrNull } from "./digests.js";
import { BatchPlanner, type PlannerMark } from "./planner.js";
import { LogReader, landedContentMissing, reconciledKey } from "./reader.js";
import { clearStaging, discardSince, StagingBuffer, seal, spill } from "./staging.js";
import type {
  AbandonResult,
  ChunkCheck,
  CommitResult,
  CommittedPartition,
  ContentSource,
  DocumentReconciler,
  ExpectationFailure,
  LandedVersion,
  LogCommit,
  ReconciledKey,
  RefusedPartition,
  StagedOp,
  StagingScope,
} from "./types.js";

export type UnitState =
  /** Taking changes. */
  | "staging"
  /**
   * Resumed after its process stopped mid-staging, or a scope's discard
   * failed to remove what it had spilled: incomplete, so it can only be
   * abandoned.
   */
  | "incomplete"
  /** Commit started: takes no more changes; commit() again continues it. */
  | "sealed"
  | "done"
  | "abandoned";

export interface UnitOptions {
  /** Where the chunk check finds content the chunk store lost. */
  readonly contentSource?: ContentSource;
  /** Spill the buffer once it holds this many ops (default 1024). */
  readonly spillOps?: number;
  /** … or this many bytes of content (default 4 MiB). */
  readonly spillBytes?: number;
}

const DEFAULT_SPILL_OPS = 1024;
const DEFAULT_SPILL_BYTES = 4 << 20;
const PAGE = 512;

/** Where a unit stood when a scope opened. */
interface UnitMark {
  readonly planner: PlannerMark;
  readonly rows: number;
  readonly bytes: number;
  readonly nextRef: number;
  readonly spills: number;
}

export class CommitUnit {
  readonly txnId: string;
  readonly #access: DatabaseAccess;
  readonly #context: LogContext;
  readonly #options: UnitOptions;
  readonly #planner = new BatchPlanner();
  readonly #buffer = new StagingBuffer();
  #state: UnitState;
  /** Why the unit is incomplete, for the refusal's message. */
  #incompleteBecause: "stopped" | "discard_failed" = "stopped";
  /** Spills so far: a scope's discard touches the staging area only if one happened since its mark. */
  #spills = 0;
  #result: CommitResult | undefined;
  /** The datastores bound to this unit, put back to the log where a staged change did not land. */
  readonly #reconcilers = new Set<DocumentReconciler>();
  #tail: Promise<unknown> = Promise.resolve();

  /** @internal Units come from `log.begin()` and `log.resume()`. */
  constructor(
    access: DatabaseAccess,
    context: LogContext,
    txnId: string,
    state: UnitState,
    options: UnitOptions = {},
  ) {
    this.#access = access;
    this.#context = context;
    this.txnId = txnId;
    this.#state = state;
    this.#options = options;
  }

  get state(): UnitState {
    return this.#state;
  }

  /**
   * Attaches a datastore's reconciler (bindUnit does, for a hook that has
   * one): when the unit commits, the documents of its refused and held-back
   * partitions are put back to what the log holds; when it is abandoned,
   * every document it staged is. Attaching the same reconciler again is a no-op.
   */
  attachReconciler(reconciler: DocumentReconciler): void {
    this.#reconcilers.add(reconciler);
  }

  /** Ops held in memory, not yet spilled to the staging area. */
  get buffered(): number {
    return this.#buffer.rows.length;
  }

  /**
   * Stages a typed change, or several in order (a rename's two, say): every
   * one is checked before any is staged, so it stages all of them or throws
   * and stages nothing.
   */
  stage(changes: TypedChange | readonly TypedChange[]): Promise<void> {
    return this.#serialize(() => this.#stageNow(changes));
  }

  /**
   * Opens a provisional staging scope, once every operation called before it
   * (an earlier scope included) has finished; until the scope is confirmed
   * or discarded, the unit's other operations wait behind it. Do not call
   * the unit's own methods from inside a scope and await them: stage through
   * the scope.
   */
  openScope(): Promise<StagingScope> {
    return new Promise<StagingScope>((opened) => {
      void this.#serialize(() => new Promise<void>((ended) => opened(this.#scope(ended))));
    });
  }

  #scope(ended: () => void): StagingScope {
    const mark: UnitMark | undefined =
      this.#state === "staging"
        ? {
            planner: this.#planner.mark(),
            rows: this.#buffer.rows.length,
            bytes: this.#buffer.bytes,
            nextRef: this.#buffer.nextRef,
            spills: this.#spills,
          }
        : undefined;
    let open = true;
    let tail: Promise<unknown> = Promise.resolve();
    const inTurn = <T>(operation: () => Promise<T>): Promise<T> => {
      const turn = tail.then(operation);
      tail = turn.catch(() => undefined);
      return turn;
    };
    const end = () => {
      open = false;
      ended();
    };
    return {
      stage: (changes) =>
        inTurn(async () => {
          if (!open) throw closed(this.txnId, "stage a change", "its staging scope has ended");
          await this.#stageNow(changes);
        }),
      confirm: () =>
        inTurn(async () => {
          if (!open) return;
          if (mark !== undefined) this.#planner.release(mark.planner);
          end();
        }),
      discard: () =>
        inTurn(async () => {
          if (!open) return;
          try {
            if (mark !== undefined && this.#state === "staging") await this.#discardSince(mark);
          } finally {
            end();
          }
        }),
    };
  }

  async #stageNow(changes: TypedChange | readonly TypedChange[]): Promise<void> {
    this.#checkStaging("stage a change");
    const list = Array.isArray(changes) ? changes : [changes as TypedChange];
    const checked = list.map((change) => checkChange(change));
    if (this.#full()) await this.#spill();
    const now = this.#context.clock();
    for (const change of checked) this.#place(change, now);
  }

  /** Returns the unit to where it stood at the mark, in memory and in the staging area. */
  async #discardSince(mark: UnitMark): Promise<void> {
    const buffer = this.#buffer;
    if (this.#spills === mark.spills) {
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
      try {
        await this.#access.transact((tx) => discardSince(tx, this.txnId, since));
      } catch (error) {
        this.#state = "incomplete";
        this.#incompleteBecause = "discard_failed";
        throw error;
      }
      buffer.clear();
    }
    buffer.nextRef = mark.nextRef;
    this.#planner.rollBack(mark.planner);
  }

  #place(change: TypedChange, now: number): void {
    const buffer = this.#buffer;
    for (const placement of this.#planner.place(change, now)) {
      buffer.batches.set(placement.batch.batch, placement.batch);
      let ordinal = placement.ordinal;
      for (const op of placement.ops) {
        const [expect, expectDigest] = expectationColumns(op.expect);
        let digest: Uint8Array | null = null;
        let contentRef: number | null = null;
        if (op.op === "put") {
          let content = buffer.contents.get(op.sha256);
          if (content === undefined) {
            content = {
              ref: buffer.nextRef++,
              digest: fromHex(op.sha256),
              data: op.bytes.slice(),
            };
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

  /** Every op staged and not yet committed, in batch order (read from the staging area). */
  async *stagedOps(): AsyncGenerator<StagedOp> {
    await this.#serialize(async () => {
      if (this.#state === "staging" && !this.#buffer.empty) await this.#spill();
    });
    let batch = -1;
    let ordinal = -1;
    for (;;) {
      const { rows } = await this.#access.read((reader) =>
        reader.execute(
          `SELECT o.batch, o.ordinal, b.partition, b.intent, o.kind, o.key, o.digest, o.expect,
  o.expect_digest
FROM staged_op o JOIN unit_batch b ON b.txn_id = o.txn_id AND b.batch = o.batch
WHERE o.txn_id = ? AND b.state = 'staged' AND (o.batch > ? OR (o.batch = ? AND o.ordinal > ?))
ORDER BY o.batch, o.ordinal LIMIT ?`,
          [this.txnId, batch, batch, ordinal, PAGE],
        ),
      );
      for (const row of rows) yield toStagedOp(row);
      if (rows.length < PAGE) return;
      const last = rows[rows.length - 1]!;
      batch = Number(last.batch);
      ordinal = Number(last.ordinal);
    }
  }

  /**
   * Commits what is staged: one commit per partition per batch, each its own
   * transaction, run partitions last. Safe to call again after it threw: it
   * lands only what had not landed. Once done it answers the same result.
   */
  commit(): Promise<CommitResult> {
    return this.#serialize(async () => {
      if (this.#state === "abandoned") throw closed(this.txnId, "commit", "it was abandoned");
      if (this.#state === "incomplete") throw incomplete(this.txnId, this.#incompleteBecause);
      if (this.#state === "staging") {
        const now = this.#context.clock();
        await this.#access.transact(async (tx) => {
          if (!this.#buffer.empty) await spill(tx, this.txnId, this.#buffer);
          await seal(tx, this.txnId, now);
        });
        this.#buffer.clear();
        this.#state = "sealed";
      }
      if (this.#state === "sealed") {
        await this.#decideBatches();
        const chunks = await checkChunks(
          this.#access,
          { txnId: this.txnId },
          this.#options.contentSource,
        );
        const reconciled = await this.#reconcile("unlanded");
        const now = this.#context.clock();
        await this.#access.transact((tx) => clearStaging(tx, this.txnId, { now }));
        this.#state = "done";
        this.#result = await this.#readResult(chunks, reconciled);
      }
      this.#result ??= await this.#readResult(
        await checkChunks(this.#access, { txnId: this.txnId }, this.#options.contentSource),
        [],
      );
      return this.#result;
    });
  }

  /**
   * Discards what is staged and not landed. Before commit() nothing lands at
   * all; after a commit() that threw, what already landed stays (commits are
   * permanent) and the rest, run partitions included, never will. Every
   * document the unit staged is first put back to what the log holds, in
   * each attached datastore (`reconciled`); abandoning again answers no keys.
   */
  abandon(): Promise<AbandonResult> {
    return this.#serialize(async () => {
      if (this.#state === "abandoned") return { txnId: this.txnId, reconciled: [] };
      if (this.#state === "done") throw closed(this.txnId, "abandon", "it is already committed");
      const reconciled = await this.#reconcile("all");
      this.#buffer.clear();
      await this.#access.transact((tx) => clearStaging(tx, this.txnId, undefined));
      this.#state = "abandoned";
      return { txnId: this.txnId, reconciled };
    });
  }

  /**
   * Puts every attached datastore's documents back to what the log holds,
   * for the keys whose staged change did not land: `unlanded` — the keys of
   * refused and held-back batches (after the batches were decided); `all` —
   * every key staged, in the staging area and still in the buffer (abandon).
   * Reads the staged ops a page at a time in batch order; each key once.
   */
  async #reconcile(which: "unlanded" | "all"): Promise<ReconciledKey[]> {
    if (this.#reconcilers.size === 0) return [];
    const seen = new Set<string>();
    const reconciled: ReconciledKey[] = [];
    const apply = async (keys: { partition: string; key: string }[]) => {
      const fresh = keys.filter(({ partition, key }) => {
        const id = `${partition}\u0000${key}`;
        if (seen.has(id)) return false;
        seen.add(id);
        return true;
      });
      if (fresh.length === 0) return;
      const versions = await this.#access.read((reader) =>
        new LogReader(reader).landedVersions(fresh),
      );
      const complete: LandedVersion[] = [];
      for (const version of versions) complete.push(await this.#withBytes(version));
      let applied = false;
      try {
        for (const reconciler of this.#reconcilers) {
          if (await reconciler.reconcile(complete)) applied = true;
        }
      } catch (error) {
        throw reconcileFailed(this.txnId, error);
      }
      if (!applied) return;
      for (const version of complete) reconciled.push(reconciledKey(version));
    };
    const states =
      which === "all" ? "'staged', 'committed', 'refused', 'held'" : "'refused', 'held'";
    let after = { batch: -1, ordinal: -1 };
    for (;;) {
      const rows = await this.#access.read(
        async (reader) =>
          (
            await reader.execute(
              `SELECT o.batch, o.ordinal, b.partition, o.key FROM staged_op o
JOIN unit_batch b ON b.txn_id = o.txn_id AND b.batch = o.batch
WHERE o.txn_id = ? AND b.state IN (${states})
  AND (o.batch > ? OR (o.batch = ? AND o.ordinal > ?))
ORDER BY o.batch, o.ordinal LIMIT ?`,
              [this.txnId, after.batch, after.batch, after.ordinal, PAGE],
            )
          ).rows,
      );
      await apply(rows.map((row) => ({ partition: String(row.partition), key: String(row.key) })));
      if (rows.length < PAGE) break;
      const last = rows[rows.length - 1]!;
      after = { batch: Number(last.batch), ordinal: Number(last.ordinal) };
    }
    if (which === "all") {
      const buffer = this.#buffer;
      for (let at = 0; at < buffer.rows.length; at += PAGE) {
        await apply(
          buffer.rows.slice(at, at + PAGE).map((row) => ({
            partition: buffer.batches.get(row.batch)!.partition,
            key: row.key,
          })),
        );
      }
    }
    return reconciled.sort((a, b) =>
      a.partition === b.partition
        ? compareText(a.key, b.key)
        : compareText(a.partition, b.partition),
    );
  }

  /**
   * A present version with its bytes: from the chunk store, else the unit's
   * content source (only bytes that hash to the digest); `chunk_missing` when
   * neither has them — a document is never put back to bytes the log lacks.
   */
  async #withBytes(version: LandedVersion): Promise<LandedVersion> {
    if (version.state === "absent" || version.bytes !== undefined) return version;
    const bytes = await this.#options.contentSource?.read(version.sha256);
    if (bytes !== undefined && sha256Hex(bytes) === version.sha256) return { ...version, bytes };
    throw reconcileFailed(this.txnId, landedContentMissing(version));
  }

  async #decideBatches(): Promise<void> {
    const checked = new Set<string>();
    let refusedData: string[] | undefined;
    let after = { runLast: -1, batch: -1 };
    for (;;) {
      const page = await this.#access.read(async (reader) =>
        (
          await reader.execute(
            `SELECT batch, partition, intent, run_last, op_count, expect_count, staged_at, state
FROM unit_batch WHERE txn_id = ? AND state = 'staged'
  AND (run_last > ? OR (run_last = ? AND batch > ?))
ORDER BY run_last, batch LIMIT ?`,
            [this.txnId, after.runLast, after.runLast, after.batch, PAGE],
          )
        ).rows.map(toBatchRow),
      );
      for (const batch of page) {
        if (batch.runLast) {
          refusedData ??= await this.#refusedDataPartitions();
          if (refusedData.length > 0) return this.#holdRunBatches(refusedData);
        }
        const now = this.#context.clock();
        const whole = !checked.has(batch.partition);
        await this.#access.transact((tx) =>
          commitBatch(tx, this.txnId, batch, { checkWholePartition: whole, now }),
        );
        checked.add(batch.partition);
      }
      if (page.length < PAGE) return;
      const last = page[page.length - 1]!;
      after = { runLast: last.runLast ? 1 : 0, batch: last.batch };
    }
  }

  #refusedDataPartitions(): Promise<string[]> {
    return this.#access.read(async (reader) => {
      const { rows } = await reader.execute(
        `SELECT DISTINCT partition FROM unit_batch
WHERE txn_id = ? AND run_last = 0 AND state = 'refused' ORDER BY partition`,
        [this.txnId],
      );
      return rows.map((row) => String(row.partition));
    });
  }

  async #holdRunBatches(refusedData: string[]): Promise<void> {
    const outcome = JSON.stringify({ reason: "held_back", heldBecause: refusedData });
    await this.#access.transact((tx) =>
      tx.execute(
        `UPDATE unit_batch SET state = 'held', outcome = ?
WHERE txn_id = ? AND run_last = 1 AND state = 'staged'`,
        [outcome, this.txnId],
      ),
    );
  }

  async #readResult(chunks: ChunkCheck, reconciled: ReconciledKey[]): Promise<CommitResult> {
    const rows = await this.#access.read(
      async (reader) =>
        (
          await reader.execute(
            `SELECT b.batch, b.partition, b.state, b.outcome, c.commit_id, c.txn_id, c.sequence,
  c.intent, c.op_count, c.staged_at, c.committed_at
FROM unit_batch b LEFT JOIN log_commit c ON c.txn_id = b.txn_id AND c.batch = b.batch
WHERE b.txn_id = ? ORDER BY b.run_last, b.batch`,
            [this.txnId],
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
      txnId: this.txnId,
      committed: committedList,
      refused: [...refused.values()],
      chunks,
      reconciled,
    };
  }

  #full(): boolean {
    return (
      this.#buffer.rows.length >= (this.#options.spillOps ?? DEFAULT_SPILL_OPS) ||
      this.#buffer.bytes >= (this.#options.spillBytes ?? DEFAULT_SPILL_BYTES)
    );
  }

  async #spill(): Promise<void> {
    await this.#access.transact((tx) => spill(tx, this.txnId, this.#buffer));
    this.#buffer.clear();
    this.#spills++;
  }

  #checkStaging(action: string): void {
    if (this.#state === "staging") return;
    if (this.#state === "incomplete") throw incomplete(this.txnId, this.#incompleteBecause);
    const why =
      this.#state === "abandoned"
        ? "it was abandoned"
        : this.#state === "done"
          ? "it is already committed"
          : "its commit has started";
    throw closed(this.txnId, action, why);
  }

  /** One operation of this unit at a time, in call order. */
  #serialize<T>(operation: () => Promise<T>): Promise<T> {
    const turn = this.#tail.then(operation);
    this.#tail = turn.catch(() => undefined);
    return turn;
  }
}

function closed(txnId: string, action: string, why: string): RunledgerError {
  return new RunledgerError(
    "unit_closed",
    `cannot ${action} in unit ${txnId}: ${why}; begin a new unit for new work`,
    { details: { txnId } },
  );
}

function reconcileFailed(txnId: string, cause: unknown): RunledgerError {
  if (cause instanceof RunledgerError && cause.code === "reconcile_failed") return cause;
  const code = cause instanceof RunledgerError ? cause.code : undefined;
  return new RunledgerError(
    "reconcile_failed",
    `unit ${txnId} could not put the datastore's documents back to what the commit log holds ` +
      `(${cause instanceof Error ? cause.message : String(cause)}); its staged ops are kept: ` +
      "fix the cause and call commit() (or abandon()) again, which reconciles again",
    { cause, details: { txnId, ...(code === undefined ? {} : { causeCode: code }) } },
  );
}

/** A stable order for the report (UTF-16 code units). */
function compareText(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}

function incomplete(txnId: string, because: "stopped" | "discard_failed"): RunledgerError {
  const why =
    because === "stopped"
      ? "was still staging when its process stopped, so what it staged is incomplete"
      : "holds changes of a write that rolled back: discarding them from the staging area " +
        "failed, so what it staged is not what was written";
  return new RunledgerError(
    "unit_incomplete",
    `unit ${txnId} ${why} and must not land; abandon() it and stage the work again`,
    { details: { txnId, reason: because } },
  );
}

function toBatchRow(row: Row): BatchRow {
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

function toStagedOp(row: Row): StagedOp {
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
