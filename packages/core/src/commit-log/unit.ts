/**
 * A unit of work on the commit log: `stage(change)` as the work happens,
 * then `commit()` once (or `abandon()`). This module is the unit's state
 * machine — staging → sealed → done, or abandoned; incomplete when resumed
 * mid-staging or after a failed discard — and the one queue its operations
 * take turns in. Each concern it drives has its own module:
 *
 * - staging: each change is checked whole (`invalid_change`), placed in the
 *   batch plan (./planner.ts) and kept in a bounded buffer that spills to
 *   the log's staging area (./staging.ts). `stage` either stages the change
 *   or throws and stages nothing.
 * - scopes (./unit-scope.ts): `openScope()` stages provisionally, and a
 *   discard returns the unit to where the scope began. Scopes take turns
 *   with every other operation of the unit. A discard that could not remove
 *   spilled rows leaves the unit `incomplete`: it can then only be
 *   abandoned, never commit a change nobody wrote.
 * - the decision (./unit-decide.ts): `commit` seals the unit (the last spill
 *   and the seal are one transaction), then decides every batch in order,
 *   holding run partitions back once a data partition was refused. Every
 *   decision is stored with its batch, so committing again — after an
 *   error, or in another process after a crash (`log.resume(txnId)`) — keeps
 *   the txn id and lands only the rest.
 * - after the batches, the chunk check (./chunks.ts) re-stores any missing
 *   content; then the staged ops and contents are deleted and the unit is
 *   done. Its batch rows stay as its outcome, so a later commit() or resume
 *   answers the same result.
 * - reconciliation (./unit-reconcile.ts): the datastores bound to the unit
 *   are put back to what the log holds where a staged change did not land.
 * - row mapping (./unit-rows.ts).
 */
import { checkChange, type TypedChange } from "../changes/change.js";
import { RunledgerError } from "../port/errors.js";
import { keysetRows } from "../port/keyset.js";
import { TurnQueue } from "../port/turn-queue.js";
import { checkChunks } from "./chunks.js";
import type { DatabaseAccess, LogContext } from "./context.js";
import { BatchPlanner } from "./planner.js";
import { bufferPlacements, clearStaging, StagingBuffer, seal, spill } from "./staging.js";
import type {
  AbandonResult,
  CommitResult,
  ContentSource,
  DocumentReconciler,
  ReconciledKey,
  StagedOp,
  StagingScope,
} from "./types.js";
import { decideBatches, readOutcome } from "./unit-decide.js";
import { type ReconcileParts, reconcileUnit } from "./unit-reconcile.js";
import { toStagedOp } from "./unit-rows.js";
import { markOf, rollBackTo, type ScopedParts, stagingScope, type UnitMark } from "./unit-scope.js";

/** Where a unit of work is in its life: staging, incomplete, sealed (its commit started), done or abandoned. */
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

/** Every name of UnitOptions. */
export const UNIT_OPTIONS = ["contentSource", "spillOps", "spillBytes"];

const DEFAULT_SPILL_OPS = 1024;
const DEFAULT_SPILL_BYTES = 4 << 20;
const PAGE = 512;

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
  /** One operation of this unit at a time, in call order. */
  readonly #turns = new TurnQueue();

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
    return this.#turns.run(() => this.#stageNow(changes));
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
      void this.#turns.run(
        () =>
          new Promise<void>((ended) => {
            const mark = this.#state === "staging" ? markOf(this.#scoped()) : undefined;
            const hooks = {
              stage: (changes: TypedChange | readonly TypedChange[]) => this.#stageNow(changes),
              confirm: () => {
                if (mark !== undefined) this.#planner.release(mark.planner);
              },
              discard: async () => {
                if (mark !== undefined && this.#state === "staging") await this.#discardSince(mark);
              },
              ended: () => closed(this.txnId, "stage a change", "its staging scope has ended"),
            };
            opened(stagingScope(hooks, ended));
          }),
      );
    });
  }

  async #stageNow(changes: TypedChange | readonly TypedChange[]): Promise<void> {
    this.#checkStaging("stage a change");
    const list = Array.isArray(changes) ? changes : [changes as TypedChange];
    const checked = list.map((change) => checkChange(change));
    if (this.#full()) await this.#spill();
    const now = this.#context.clock();
    for (const change of checked) bufferPlacements(this.#buffer, this.#planner.place(change, now));
  }

  /** Returns the unit to a scope's mark; when that fails the unit can only be abandoned. */
  async #discardSince(mark: UnitMark): Promise<void> {
    try {
      await rollBackTo(this.#scoped(), mark);
    } catch (error) {
      this.#state = "incomplete";
      this.#incompleteBecause = "discard_failed";
      throw error;
    }
  }

  #scoped(): ScopedParts {
    return {
      txnId: this.txnId,
      access: this.#access,
      planner: this.#planner,
      buffer: this.#buffer,
      spills: this.#spills,
    };
  }

  /** Every op staged and not yet committed, in batch order (read from the staging area). */
  async *stagedOps(): AsyncGenerator<StagedOp> {
    await this.#turns.run(async () => {
      if (this.#state === "staging" && !this.#buffer.empty) await this.#spill();
    });
    const rows = keysetRows({
      start: { batch: -1, ordinal: -1 },
      page: (after, limit) =>
        this.#access.read(
          async (reader) =>
            (
              await reader.execute(
                `SELECT o.batch, o.ordinal, b.partition, b.intent, o.kind, o.key, o.digest, o.expect,
  o.expect_digest
FROM staged_op o JOIN unit_batch b ON b.txn_id = o.txn_id AND b.batch = o.batch
WHERE o.txn_id = ? AND b.state = 'staged' AND (o.batch > ? OR (o.batch = ? AND o.ordinal > ?))
ORDER BY o.batch, o.ordinal LIMIT ?`,
                [this.txnId, after.batch, after.batch, after.ordinal, limit],
              )
            ).rows,
        ),
      keyOf: (last) => ({ batch: Number(last.batch), ordinal: Number(last.ordinal) }),
      limit: PAGE,
    });
    for await (const row of rows) yield toStagedOp(row);
  }

  /**
   * Commits what is staged: one commit per partition per batch, each its own
   * transaction, run partitions last. Safe to call again after it threw: it
   * lands only what had not landed. Once done it answers the same result.
   */
  commit(): Promise<CommitResult> {
    return this.#turns.run(async () => {
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
        await decideBatches(this.#access, this.#context, this.txnId);
        const chunks = await checkChunks(
          this.#access,
          { txnId: this.txnId },
          this.#options.contentSource,
        );
        const reconciled = await this.#reconcile("unlanded");
        const now = this.#context.clock();
        await this.#access.transact((tx) => clearStaging(tx, this.txnId, { now }));
        this.#state = "done";
        this.#result = await readOutcome(this.#access, this.txnId, chunks, reconciled);
      }
      this.#result ??= await readOutcome(
        this.#access,
        this.txnId,
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
    return this.#turns.run(async () => {
      if (this.#state === "abandoned") return { txnId: this.txnId, reconciled: [] };
      if (this.#state === "done") throw closed(this.txnId, "abandon", "it is already committed");
      const reconciled = await this.#reconcile("all");
      this.#buffer.clear();
      await this.#access.transact((tx) => clearStaging(tx, this.txnId, undefined));
      this.#state = "abandoned";
      return { txnId: this.txnId, reconciled };
    });
  }

  #reconcile(which: "unlanded" | "all"): Promise<ReconciledKey[]> {
    const parts: ReconcileParts = {
      txnId: this.txnId,
      access: this.#access,
      reconcilers: this.#reconcilers,
      buffer: this.#buffer,
      contentSource: this.#options.contentSource,
    };
    return reconcileUnit(parts, which);
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
}

function closed(txnId: string, action: string, why: string): RunledgerError {
  return new RunledgerError(
    "unit_closed",
    `cannot ${action} in unit ${txnId}: ${why}; begin a new unit for new work`,
    { details: { txnId } },
  );
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
