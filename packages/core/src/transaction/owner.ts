/**
 * The transaction owner: the only code in core that issues BEGIN, COMMIT
 * and ROLLBACK (docs/architecture.md, "One owner of transactions").
 */
import type { DriverConnection, DriverTransaction } from "../port/driver.js";
import { isRunledgerError, RunledgerError } from "../port/errors.js";
import { Done, promised } from "../port/turn-queue.js";
import { retryWhileBusy } from "./busy.js";
import { NOT_NOW, Operation } from "./operations.js";
import { Savepoints } from "./savepoints.js";
import {
  endScope,
  escaped,
  type Optimism,
  ReadScope,
  type TransactionState,
  WriteScope,
} from "./scope.js";

/**
 * What the owner needs of the connection it runs on: the provider's entry
 * satisfies it, and transaction/ stays below connection/ (it names no
 * provider type).
 */
export interface TransactionHost {
  readonly location: string;
  readonly connection: DriverConnection;
  /** Opened read-only: its connection refuses writes for its whole life. */
  readonly readOnly: boolean;
  /** Marks the connection unusable after a failed cleanup, and returns the error to throw. */
  poison(failure: unknown, cleanupFailure: unknown): RunledgerError;
}

/** How a write transaction may be sent. */
export interface WriteOptions {
  /**
   * On a server (`connection.remote`), core may assume the answers of the
   * writes it makes on a guess (a step's event after the newest event the
   * lease saw) and send the whole transaction with its COMMIT: one request.
   * When the server refuses it — the guess was stale because another writer
   * moved the run, or any statement failed — nothing of it committed, and
   * `fn` runs once more the ordinary way, reading what it needs: that run's
   * outcome is the caller's. So `fn` may run twice, and must do nothing
   * outside its transaction that it cannot do twice. Ignored on a local
   * connection, where a round trip costs nothing worth saving.
   */
  readonly optimistic?: boolean;
}

/**
 * The only top-level transaction owner. It runs inside the entry's turn:
 * BEGIN IMMEDIATE (retried while another process holds the lock) → fn(tx) →
 * COMMIT; any throw → ROLLBACK and rethrow. A failure after which SQLite or
 * the server ended the transaction by itself (SQLITE_FULL, an I/O error, a
 * lost connection) is rethrown with its own code: the driver's rollback is
 * then a no-op, and the entry stays usable for the next transaction. If the
 * ROLLBACK of a live transaction fails the entry is poisoned and the caller
 * gets `poisoned`, carrying both failures. `optimistic`: see WriteOptions.
 */
export function runWriteTransaction<T>(
  entry: TransactionHost,
  fn: (tx: WriteScope) => Promise<T>,
  busyDeadlineMs: number,
  options?: WriteOptions,
): Promise<T> {
  return promised(writeTransaction(entry, fn, busyDeadlineMs, options));
}

/**
 * `runWriteTransaction`, answering `Done` when the transaction committed
 * before this returned: a step on a synchronous driver, whose callback
 * returned an operation done already (see `runBegun`). A lease's turn then
 * ends at once, with no promise made until the caller's own.
 */
export function writeTransaction<T>(
  entry: TransactionHost,
  fn: (tx: WriteScope) => Promise<T>,
  busyDeadlineMs: number,
  options?: WriteOptions,
): Promise<T> | Done<T> {
  // Not async: an ordinary transaction is the hot path, and needs no frame of its own here.
  if (options?.optimistic !== true || entry.connection.remote !== true) {
    return runOnce(entry, fn, busyDeadlineMs, undefined);
  }
  return runOptimistic(entry, fn, busyDeadlineMs);
}

/** An optimistic transaction: once assuming answers, and once more the ordinary way if refused. */
async function runOptimistic<T>(
  entry: TransactionHost,
  fn: (tx: WriteScope) => Promise<T>,
  busyDeadlineMs: number,
): Promise<T> {
  const optimism: Optimism = { assumed: false, refused: false };
  try {
    return await promised(runOnce(entry, fn, busyDeadlineMs, optimism));
  } catch (error) {
    // Run again only when an answer was assumed and the server is known to have kept nothing.
    if (!optimism.assumed || !optimism.refused) throw error;
  }
  return promised(runOnce(entry, fn, busyDeadlineMs, undefined));
}

/**
 * BEGIN IMMEDIATE, retried while another connection holds the lock, then the
 * transaction. Where the driver begins now (`beginNow`), the first attempt
 * makes no promise: a step's common case, the lock free.
 */
function runOnce<T>(
  entry: TransactionHost,
  fn: (tx: WriteScope) => Promise<T>,
  busyDeadlineMs: number,
  optimism: Optimism | undefined,
): Promise<T> | Done<T> {
  const { connection } = entry;
  const started = Date.now();
  if (connection.beginNow !== undefined) {
    let begun: DriverTransaction | undefined;
    try {
      begun = connection.beginNow("immediate");
    } catch (error) {
      if (!isRunledgerError(error, "busy")) return Promise.reject(error);
      // SQLite's busy handler gave up: the rest of the deadline is waited out the ordinary way.
    }
    if (begun !== undefined) return runBegun(entry, begun, fn, optimism);
  }
  return retryWhileBusy(
    () => connection.begin("immediate"),
    busyDeadlineMs,
    `cannot start a write transaction on ${entry.location}`,
    started,
  ).then((begun) => promised(runBegun(entry, begun, fn, optimism)));
}

/**
 * The transaction begun: fn(tx), then COMMIT; any throw, ROLLBACK (see
 * runWriteTransaction). Where the driver commits now and the callback
 * returned an operation done already (a step's apply on a synchronous
 * driver), the transaction commits before this returns, and its value is
 * answered `Done`; every other transaction settles in `finish`. Never throws:
 * a failure is a rejected promise.
 */
function runBegun<T>(
  entry: TransactionHost,
  transaction: DriverTransaction,
  fn: (tx: WriteScope) => Promise<T>,
  optimism: Optimism | undefined,
): Promise<T> | Done<T> {
  const scope = writeScope(entry, transaction, optimism === undefined ? {} : { optimism });
  let returned: Promise<T>;
  try {
    returned = fn(scope);
  } catch (error) {
    returned = Promise.reject(error);
  }
  if (
    transaction.commitNow === undefined ||
    optimism !== undefined ||
    !(returned instanceof Operation)
  ) {
    return finish(entry, transaction, scope, returned, optimism);
  }
  const value = returned.takeNow() as T | typeof NOT_NOW;
  if (value === NOT_NOW) return finish(entry, transaction, scope, returned, optimism);
  // What `finish` checks before its COMMIT; a transaction that fails them settles there.
  if (scope.doomed !== undefined || scope.hasEscapedWork) {
    return finish(entry, transaction, scope, Promise.resolve(value), optimism);
  }
  endScope(scope);
  try {
    transaction.commitNow();
  } catch (failure) {
    // The COMMIT refused (a deferred constraint, say): rolled back as `finish` rolls back.
    return rollBackAfter(entry, transaction, commitFailure(failure, entry.location));
  }
  return new Done(value);
}

/** What a write transaction's callback is given: `transaction` with its savepoints and state. */
function writeScope(
  entry: TransactionHost,
  transaction: DriverTransaction,
  state: TransactionState,
): WriteScope {
  const savepoints = new Savepoints(
    transaction,
    {
      // Ended by SQLite or the server: never committed, the failure keeps its code.
      ended: (failure) => {
        state.doomed ??= failure;
      },
      failed: (failure, cleanupFailure) => {
        // A poisoned transaction never commits, even if a callback swallows this.
        const poisoned = entry.poison(failure, cleanupFailure);
        state.doomed ??= poisoned;
        throw poisoned;
      },
    },
    // A server's client learns late that the server ended a transaction (see Savepoints).
    { deferrable: entry.connection.remote !== true },
  );
  return new WriteScope(transaction, savepoints, state);
}

/**
 * A write transaction whose writes are never kept: BEGIN IMMEDIATE → fn(tx)
 * → ROLLBACK, whatever fn does; fn's failure is thrown after the ROLLBACK. For
 * work that must see its own writes and then leave the database as it was: a
 * new database placed from a provider's kept template
 * (connection/staged-template.ts). A failed ROLLBACK poisons the entry.
 */
export async function runDiscardedTransaction<T>(
  entry: TransactionHost,
  fn: (tx: WriteScope) => Promise<T>,
  busyDeadlineMs: number,
): Promise<T> {
  const transaction = await retryWhileBusy(
    () => entry.connection.begin("immediate"),
    busyDeadlineMs,
    `cannot start a write transaction on ${entry.location}`,
  );
  const outcome = await runToEnd(writeScope(entry, transaction, {}), fn);
  await rollBack(entry, transaction, outcome.ok ? undefined : outcome.error);
  if (!outcome.ok) throw outcome.error;
  return outcome.value;
}

/** What a callback ended with: its value, or its failure. */
type Outcome<T> = { ok: true; value: T } | { ok: false; error: unknown };

/**
 * `fn` run on `scope` to its end, for a transaction that is rolled back
 * afterwards whatever happens: its value, or its failure — a write scope's
 * doom first, then work the callback left running (`callback_escaped`). The
 * scope is ended either way, the work left behind failing with the error
 * the caller gets. Never throws.
 */
async function runToEnd<S extends ReadScope | WriteScope, T>(
  scope: S,
  fn: (scope: S) => Promise<T>,
): Promise<Outcome<T>> {
  try {
    const value = await fn(scope);
    if (scope instanceof WriteScope && scope.doomed !== undefined) throw scope.doomed;
    if (scope.hasEscapedWork) throw escaped("transaction");
    endScope(scope);
    return { ok: true, value };
  } catch (error) {
    endScope(scope, () => escapeOf(error));
    return { ok: false, error };
  }
}

/** The callback's promise settled: COMMIT; any throw, ROLLBACK (see runWriteTransaction). */
async function finish<T>(
  entry: TransactionHost,
  transaction: DriverTransaction,
  scope: WriteScope,
  returned: Promise<T>,
  optimism: Optimism | undefined,
): Promise<T> {
  try {
    let result: T;
    try {
      result = await returned;
      if (scope.doomed !== undefined) throw scope.doomed;
    } catch (error) {
      // The server ended the transaction under the callback: nothing of it is kept.
      if (optimism !== undefined && !transaction.active) optimism.refused = true;
      throw error;
    }
    if (scope.hasEscapedWork) throw escaped("transaction");
    endScope(scope);
    try {
      if (transaction.commitNow !== undefined) transaction.commitNow();
      else await transaction.commit();
    } catch (failure) {
      const thrown = commitFailure(failure, entry.location);
      // Refused, not lost: the server answered with its own error, and kept nothing.
      if (optimism !== undefined && thrown === failure && isRunledgerError(failure)) {
        optimism.refused = true;
      }
      throw thrown;
    }
    return result;
  } catch (error) {
    // Work the callback left behind fails with the error the caller gets.
    endScope(scope, () => escapeOf(error));
    return rollBackAfter(entry, transaction, error);
  }
}

/** ROLLBACK after `failure`, which is then thrown (a failed ROLLBACK poisons the entry instead). */
async function rollBackAfter(
  entry: TransactionHost,
  transaction: DriverTransaction,
  failure: unknown,
): Promise<never> {
  await rollBack(entry, transaction, failure);
  throw failure;
}

/**
 * A consistent snapshot with no write capability: `query_only` is switched on
 * for the duration, so a write fails inside SQLite itself (`write_in_read`).
 * A read-only entry's connection refuses writes for its whole life (the
 * driver opened it read-only, with query_only on): there nothing is switched,
 * since switching query_only off afterwards would undo the driver's setting.
 * A remote server refuses that pragma: there the snapshot is a deferred
 * transaction that is always rolled back, so nothing written inside it ever
 * lands (the read API offers no write; raw SQL that writes is undone, not
 * refused).
 */
export async function runReadTransaction<T>(
  entry: TransactionHost,
  fn: (reader: ReadScope) => Promise<T>,
): Promise<T> {
  const { connection } = entry;
  const toggle = !entry.readOnly && connection.remote !== true;
  if (toggle) await connection.execute("PRAGMA query_only = 1");
  let transaction: DriverTransaction | undefined;
  let outcome: Outcome<T>;
  try {
    transaction = await connection.begin("deferred");
    outcome = await runToEnd(new ReadScope(transaction), fn);
  } catch (error) {
    outcome = { ok: false, error };
  }
  try {
    if (transaction !== undefined) await transaction.rollback();
    if (toggle) await connection.execute("PRAGMA query_only = 0");
  } catch (cleanupFailure) {
    throw entry.poison(outcome.ok ? undefined : outcome.error, cleanupFailure);
  }
  if (!outcome.ok) throw outcome.error;
  return outcome.value;
}

/**
 * The codes that say the connection went away. At COMMIT they leave the
 * outcome unknown: the server may have committed before its answer was lost.
 */
const CONNECTION_GONE: ReadonlySet<string> = new Set(["connection_lost", "server_unreachable"]);

/**
 * What a failed COMMIT is to the caller. SQLite's own refusal of a commit
 * (a constraint deferred to it, a full disk) means nothing landed and keeps
 * its code; a connection lost while the COMMIT was in flight means the
 * transaction may or may not have landed, which is `commit_unknown` — never
 * "nothing committed". A retry is safe only by key (`transact(fn, { key })`).
 */
function commitFailure(failure: unknown, location: string): unknown {
  if (!isRunledgerError(failure) || !CONNECTION_GONE.has(failure.code)) return failure;
  return new RunledgerError(
    "commit_unknown",
    `the connection to ${location} was lost while its COMMIT was in flight: the transaction may or may ` +
      "not have landed. Retry it with the same key (lease.transact(fn, { key })) once the server is back: " +
      "a keyed transaction lands at most once, and a retry of one that landed answers already_landed",
    { cause: failure, details: { failure: failure.code } },
  );
}

/** The `callback_escaped` error that work left behind by a failed callback rejects with. */
function escapeOf(failure: unknown): RunledgerError {
  return isRunledgerError(failure, "callback_escaped") ? failure : escaped("transaction");
}

async function rollBack(entry: TransactionHost, transaction: DriverTransaction, failure: unknown) {
  try {
    await transaction.rollback();
  } catch (cleanupFailure) {
    throw entry.poison(failure, cleanupFailure);
  }
}
