/**
 * A run lease: the handle `RunStore.open` gives on one run, which runs its
 * transactions (keyed ones landing at most once), its snapshots and
 * `verify`, and tells the store's catalog what changed.
 */
import type { Lease } from "../connection/lease.js";
import { checkNames } from "../port/options.js";
import type { WriteScope } from "../transaction/scope.js";
import type { VerifyProgress } from "../workspace/verify.js";
import { noHint, primeHint, type RootHint } from "./journal.js";
import { type RunMarks, RunSnapshot, RunTransaction } from "./scopes.js";
import {
  checkOptimistic,
  checkTransactionKey,
  claimKey,
  recordKey,
  type TransactOptions,
} from "./transaction-keys.js";
import type { RunContext } from "./types.js";
import { type VerifyReport, verifyRun } from "./verify.js";

/** A handle on one run. Release it (or `await using` it) when done. */
export class RunLease {
  readonly #lease: Lease;
  readonly #context: RunContext;
  /** The last event this lease saw appended: a guess SQLite checks on every use (see RootHint). */
  readonly #hint: RootHint = noHint();
  /** The store's catalog note, when it has a catalog: after a stop or resume, and at release. */
  readonly #note: ((lease: RunLease) => Promise<void>) | undefined;

  /** @internal Run leases come from `RunStore.open`. */
  constructor(lease: Lease, context: RunContext, note?: (lease: RunLease) => Promise<void>) {
    this.#lease = lease;
    this.#context = context;
    this.#note = note;
  }

  get location(): string {
    return this.#lease.location;
  }

  /** True for a lease from `open(location, { readOnly: true })`. */
  get readOnly(): boolean {
    return this.#lease.readOnly;
  }

  /**
   * The connection-level lease under this run (`Lease` of
   * `@runledger/core/engine`): statements on the run's own connection, for
   * tools and test suites that inspect its tables. What it writes bypasses
   * the run's rules; the journal, workspace and run row are the way to write.
   */
  get lease(): Lease {
    return this.#lease;
  }

  /**
   * Runs `fn` in one write transaction: all of it commits, or none. With
   * `{ key }` it lands at most once: the key is recorded in the same
   * transaction, and a later call with that key runs nothing and fails
   * `already_landed` (details: the sequences it appended). That makes a
   * retry after `commit_unknown` — a connection lost while the COMMIT was in
   * flight — safe.
   */
  transact<T>(fn: (tx: RunTransaction) => Promise<T>, options: TransactOptions = {}): Promise<T> {
    checkNames(options, ["key", "optimistic"], "transact's options");
    const { key, optimistic } = options;
    if (key !== undefined) checkTransactionKey(key);
    if (optimistic !== undefined) checkOptimistic(optimistic);
    const sending = optimistic === true ? { optimistic } : undefined;
    const note = this.#note;
    const marks: RunMarks | undefined = note === undefined ? undefined : { statusChanged: false };
    const hint = this.#hint;
    let attempts = 0;
    const context = this.#context;
    // Not async when unkeyed: a step's own frame, on the hot path.
    const work = (scope: WriteScope): Promise<T> => {
      // A second run of an optimistic transaction: the server refused the first, so the view it
      // was sent on is not trusted; this run reads the newest event under the write lock.
      if (++attempts > 1) forget(hint);
      if (hint.root === undefined) primeHint(scope, hint, context.workspace.nodes);
      const run = () => fn(new RunTransaction(scope, context, hint, marks));
      return key === undefined ? run() : keyed(scope, key, context, run);
    };
    if (note === undefined) return this.#lease.transact(work, sending);
    return this.#lease.transact(work, sending).then(async (result) => {
      // After the commit, never inside it: the catalog is another database (catalog/link.ts).
      if (marks?.statusChanged === true) await note(this);
      return result;
    });
  }

  read<T>(fn: (r: RunSnapshot) => Promise<T>): Promise<T> {
    return this.#lease.read((scope) => fn(new RunSnapshot(scope, this.#context.workspace)));
  }

  /** The deep, O(data) check: integrity, every CHECK, gap-free journal and its digest chain, every object re-hashed, every reference. */
  verify(options: { progress?: VerifyProgress } = {}): Promise<VerifyReport> {
    try {
      checkNames(options, ["progress"], "verify's options");
    } catch (error) {
      return Promise.reject(error);
    }
    return this.#lease.read((scope) =>
      verifyRun(scope, this.#context.workspace.hash, options.progress),
    );
  }

  async release(): Promise<void> {
    // The last sequence and times as this lease leaves them; a read-only lease changed nothing.
    if (this.#note !== undefined && !this.readOnly && !this.#lease.released) await this.#note(this);
    return this.#lease.release();
  }

  [Symbol.asyncDispose](): Promise<void> {
    return this.release();
  }
}

/** A keyed transaction's work: its key claimed first, recorded last (./transaction-keys.ts). */
async function keyed<T>(
  scope: WriteScope,
  key: string,
  context: RunContext,
  run: () => Promise<T>,
): Promise<T> {
  const { before } = await claimKey(scope, key);
  const result = await run();
  await recordKey(scope, key, before, context.clock());
  return result;
}

/** Drops a lease's view of the newest event: the next write reads it. */
function forget(hint: RootHint): void {
  hint.root = undefined;
  hint.sequence = undefined;
  hint.digest = undefined;
}
