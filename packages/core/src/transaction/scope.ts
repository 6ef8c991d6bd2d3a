/**
 * Scopes: the executor a transaction callback is given, which refuses use
 * after the callback ends or while a savepoint on it runs, and which knows
 * whether the callback awaited the work it started (operations.ts).
 */
import { Kysely } from "kysely";
import { RunledgerDialect } from "../port/dialect.js";
import type { DriverTransaction, Executor, QueryResult } from "../port/driver.js";
import { isRunledgerError, RunledgerError } from "../port/errors.js";
import type { SqlValue } from "../port/values.js";
import { Operation, type Outstanding } from "./operations.js";
import type { Savepoints } from "./savepoints.js";

/**
 * A scope is what a callback receives: the transaction (or savepoint) it may
 * use while the callback runs, and nothing after. Every misuse fails loudly
 * with its own code instead of writing somewhere unexpected:
 * - `transaction_closed`: the scope is used after its callback ended;
 * - `savepoint_overlap`: a scope is used while a savepoint opened on it is
 *   still running (two side by side, or the outer one written meanwhile);
 * - `callback_escaped`: the callback returned while work it started was
 *   still running, or had finished without being awaited. The owner then
 *   rolls the transaction (or savepoint) back, and that work rejects with
 *   the same error.
 *
 * What counts as work started: on a scope handed straight to a callback
 * (`Lease.transact`, `Lease.read`, the engine API), each statement and each
 * savepoint. On a scope under the run API, each call of the run API
 * (`tx.journal.append`, `tx.workspace.apply`, …): the statements core issues
 * for it are awaited by core, and tracking each of them would add a promise
 * per statement to the hot path.
 * A storage failure that must not be committed past (see `doom`) ends the
 * whole transaction: every scope of it then refuses work with that failure.
 * So does a failed statement after which SQLite or the server has ended the
 * transaction by itself (SQLITE_FULL, a lost connection): a later statement
 * would run outside any transaction and land on its own.
 */
export interface TransactionState {
  /** The failure that condemned the transaction to roll back, if any. */
  doomed?: unknown;
  /** An optimistic transaction's account (owner.ts, WriteOptions); absent on every other. */
  readonly optimism?: Optimism;
}

/** What the owner learns of an optimistic transaction to decide whether to run it again. */
export interface Optimism {
  /** A write was sent with its answer assumed (`WriteScope.assumeAnswer`). */
  assumed: boolean;
  /** The server refused the transaction, or ended it: nothing of it was kept. */
  refused: boolean;
}

/** Set once by Scope below: marks a scope ended (its `#ended` is private to the class). */
let markEnded: (scope: Scope, refusal: () => RunledgerError) => void;

/**
 * Called by the owner when a callback has finished: the scope is dead from
 * here on, and work it started that is still outstanding (still running, or
 * never awaited) is rejected with `refusal()` — the owner passes the
 * `callback_escaped` error it throws, so both are the same.
 */
export function endScope(
  scope: ReadScope | WriteScope,
  refusal: () => RunledgerError = () => escaped("transaction"),
): void {
  markEnded(scope, refusal);
}

abstract class Scope implements Executor {
  static {
    markEnded = (scope, refusal) => {
      scope.#ended = true;
      const outstanding = scope.#outstanding;
      if (outstanding === undefined || outstanding.size === 0) return;
      const error = refusal();
      for (const operation of outstanding) operation.abandon(error);
      outstanding.clear();
    };
  }

  protected readonly executor: DriverTransaction;
  protected readonly state: TransactionState;
  /** The scope this savepoint was opened on: when that one ends, so does this one. */
  readonly #parent: Scope | undefined;
  /** 0 for a transaction, n for a scope inside n savepoints. */
  protected readonly depth: number;
  #ended = false;
  #inFlight = 0;
  #openChild = false;
  /** Statements and savepoints are tracked one by one (see the header), until the run API takes over. */
  #tracksStatements: boolean;
  /** Operations started here and not yet both finished and awaited; made on the first. */
  #outstanding: Outstanding | undefined;
  /**
   * A savepoint opened on demand whose SAVEPOINT has not been sent yet: its
   * name (see `WriteScope.savepointOnDemand`). Undefined on every other scope.
   * @internal
   */
  protected unopened: string | undefined;
  /** A statement changed rows here before the savepoint on demand was opened. @internal */
  protected wroteUnguarded = false;
  /** This scope's own savepoint was sent and answered: RELEASE or ROLLBACK TO it ends it. @internal */
  protected savepointOpen = false;
  // biome-ignore lint/suspicious/noExplicitAny: callers pick their own Kysely schema type
  #kysely: Kysely<any> | undefined;

  constructor(executor: DriverTransaction, state: TransactionState = {}, parent?: Scope) {
    this.executor = executor;
    this.state = state;
    this.#parent = parent;
    this.depth = parent === undefined ? 0 : parent.depth + 1;
    this.#tracksStatements = parent === undefined ? true : parent.#tracksStatements;
  }

  execute(
    sql: string,
    params: readonly SqlValue[] = [],
    options?: { readonly later?: boolean },
  ): Promise<QueryResult> {
    // Where the driver answers now, the statement is done before this returns:
    // its operation holds the answer (and a transaction returning it commits now).
    const pending =
      options === undefined && this.runsNow
        ? this.#statementNow(sql, params)
        : this.#statement(sql, params, options);
    if (this.#tracksStatements) return this.track(pending);
    return pending instanceof Promise ? pending : Promise.resolve(pending);
  }

  /** A statement run now (`runsNow`): its answer, or its failure as `execute` rejects with it. */
  #statementNow(sql: string, params: readonly SqlValue[]): QueryResult | Promise<QueryResult> {
    try {
      return this.executeNow(sql, params) as QueryResult;
    } catch (error) {
      return Promise.reject(error);
    }
  }

  /**
   * Several statements separated by `;`, with no parameters, in one call to
   * the driver (one round trip on a server): what creating a schema sends.
   */
  executeScript(sql: string): Promise<void> {
    // What a script changes is not told: on a savepoint not yet opened, it counts as a write.
    if (this.unopened !== undefined) this.wroteUnguarded = true;
    const pending = this.#run(() => this.executor.executeScript(sql));
    return this.#tracksStatements ? this.track(pending) : pending;
  }

  /**
   * Hands out `work`, started in this scope, as an operation of it: the
   * scope's callback must await it before returning. Work
   * started after the callback ended is not tracked; it fails on its own
   * (`transaction_closed`). Work done already (a step's apply run now) is
   * its value: the operation holds it, as it holds a settled promise's.
   */
  track<T>(work: T | Promise<T>): Promise<T> {
    if (this.ended) return work instanceof Promise ? work : Promise.resolve(work);
    this.#outstanding ??= new Set();
    return new Operation(work, this.#outstanding);
  }

  /**
   * From here on the run API tracks its calls on this scope (and the
   * savepoints opened on it) with `track`; the statements and savepoints core
   * issues for those calls are not tracked one by one.
   */
  tracksOperations(): void {
    this.#tracksStatements = false;
  }

  protected get tracksStatements(): boolean {
    return this.#tracksStatements;
  }

  #statement(
    sql: string,
    params: readonly SqlValue[],
    options: { readonly later?: boolean } | undefined,
  ): Promise<QueryResult> {
    const pending = this.#run(() =>
      options === undefined
        ? this.executor.execute(sql, params)
        : this.executor.execute(sql, params, options),
    );
    if (this.unopened === undefined) return pending;
    // A write the savepoint on demand does not cover: one whose answer is not
    // read (`later`) counts as one whatever it changes.
    if (options?.later === true) this.wroteUnguarded = true;
    return pending.then((result) => {
      if (result.changes > 0) this.wroteUnguarded = true;
      return result;
    });
  }

  /**
   * Whether `executeNow` runs a statement here now: the driver's statements
   * are synchronous (`DriverTransaction.executeNow`), and this scope takes
   * work outside any savepoint of its own that is not yet open. Core's hot
   * path asks before it takes the way without promises; where this is false
   * it takes the ordinary one, which also says why a scope refuses work.
   * @internal
   */
  get runsNow(): boolean {
    return (
      this.executor.executeNow !== undefined &&
      this.state.doomed === undefined &&
      this.unopened === undefined &&
      !this.#openChild &&
      !this.ended
    );
  }

  /**
   * One of core's own statements, run before this returns where `runsNow`
   * (else undefined, nothing run): its answer, or its failure thrown as
   * `execute` would reject with it. Not tracked: it runs under a run API
   * call, whose operation covers it.
   * @internal
   */
  executeNow(sql: string, params: readonly SqlValue[]): QueryResult | undefined {
    const now = this.executor.executeNow;
    if (now === undefined || !this.runsNow) return undefined;
    try {
      return now.call(this.executor, sql, params);
    } catch (error) {
      throw this.#failed(error);
    }
  }

  /** One call to the driver, counted while it runs; its failure as `#failed` makes it. */
  #run<T>(call: () => Promise<T>): Promise<T> {
    // Not async: one promise per statement, not an async frame around another.
    try {
      this.checkUsable("execute");
    } catch (error) {
      return Promise.reject(error);
    }
    this.#inFlight++;
    let pending: Promise<T>;
    try {
      pending = call();
    } catch (error) {
      this.#inFlight--;
      return Promise.reject(this.#failed(error));
    }
    return pending.then(
      (result: T) => {
        this.#inFlight--;
        return result;
      },
      (error: unknown) => {
        this.#inFlight--;
        throw this.#failed(error);
      },
    );
  }

  /** A statement's failure as thrown; it dooms the transaction if the transaction ended with it. */
  #failed(error: unknown): unknown {
    const failure = this.translate(error);
    if (!this.executor.active) this.state.doomed ??= failure;
    return failure;
  }

  /** A Kysely instance whose queries run in this scope. Typed by the caller. */
  // biome-ignore lint/suspicious/noExplicitAny: callers pick their own Kysely schema type
  kysely<DB = any>(): Kysely<DB> {
    this.#kysely ??= new Kysely({ dialect: new RunledgerDialect(this) });
    return this.#kysely as Kysely<DB>;
  }

  /**
   * Work the callback left behind: a statement or a savepoint still running,
   * or an operation not both finished and awaited.
   */
  get hasEscapedWork(): boolean {
    return this.#inFlight > 0 || this.#openChild || (this.#outstanding?.size ?? 0) > 0;
  }

  /** Whether this scope, or any scope it was opened inside, has ended. */
  get ended(): boolean {
    return this.#ended || (this.#parent?.ended ?? false);
  }

  protected set childOpen(open: boolean) {
    this.#openChild = open;
  }

  protected translate(error: unknown): unknown {
    return error;
  }

  protected checkUsable(action: string): void {
    if (this.state.doomed !== undefined) throw this.state.doomed;
    if (this.ended) throw closed(action);
    if (this.#openChild) {
      throw new RunledgerError(
        "savepoint_overlap",
        `cannot ${action}: a savepoint opened on this scope is still running; ` +
          "await it and use the tx it passes to its callback, one savepoint at a time",
      );
    }
  }
}

/** What a callback is handed: a transaction's (or savepoint's) scope, or a snapshot's. */
export type CallbackScope = ReadScope | WriteScope;

/** A scope that may write: the top-level transaction or any savepoint inside it. */
export class WriteScope extends Scope {
  readonly #savepoints: Savepoints;

  constructor(
    executor: DriverTransaction,
    savepoints: Savepoints,
    state: TransactionState = {},
    parent?: WriteScope,
  ) {
    super(executor, state, parent);
    this.#savepoints = savepoints;
  }

  /**
   * Condemns the whole transaction: it will roll back, and the failure is
   * what its owner rethrows, even if a callback catches it. For storage
   * failures that must never be committed past.
   */
  doom(failure: unknown): never {
    this.state.doomed ??= failure;
    throw failure;
  }

  /** The failure that condemned this transaction, if any. */
  get doomed(): unknown {
    return this.state.doomed;
  }

  /**
   * Whether core may send a write made on a guess without reading its
   * answer (`{ later: true }`), assuming it succeeds: true in an optimistic
   * transaction on a server, which the owner runs again the ordinary way if
   * the server refuses it (owner.ts, WriteOptions). Answering true records
   * that an answer was assumed. The write must fail, never change nothing,
   * when the guess was wrong.
   * @internal
   */
  assumeAnswer(): boolean {
    const optimism = this.state.optimism;
    if (optimism === undefined) return false;
    optimism.assumed = true;
    return true;
  }

  /**
   * Runs `fn` inside a savepoint named by core. On success the savepoint is
   * released; on a throw it is rolled back and released, the error rethrown,
   * and this scope continues. If SQLite or the server has ended the whole
   * transaction meanwhile, nothing is left to undo: the error is rethrown
   * with its own code and the transaction is doomed. If the cleanup fails on
   * a live transaction the entry is poisoned. A savepoint whose enclosing
   * scope ended first (its callback was not awaited) was undone with that
   * scope: it refuses further work and neither releases nor rolls back what
   * no longer exists.
   */
  savepoint<T>(fn: (tx: WriteScope) => Promise<T>): Promise<T> {
    const pending = this.#savepoint(fn, false);
    return this.tracksStatements ? this.track(pending) : pending;
  }

  /**
   * `savepoint`, for core's own work that often writes a single statement:
   * the SAVEPOINT is sent only when `fn` calls `guard()` on the scope it is
   * given, before the first of several writes. One statement needs none:
   * SQLite undoes a failed statement whole, and the transaction goes on. So
   * an apply whose only write is its event (a step) costs two statements
   * less. The rule `fn` keeps: a write made before `guard()` is its last
   * statement. If `fn` throws after such a write changed rows, nothing can
   * undo that write alone: the transaction is doomed (it rolls back whole),
   * never committed with half of `fn` in it. Only on a local connection
   * (`Savepoints.deferrable`): where a failed statement may have ended the
   * transaction without the driver knowing yet (a server), the savepoint is
   * opened at once, as `savepoint` does, and its undo tells.
   * @internal
   */
  savepointOnDemand<T>(fn: (tx: WriteScope) => Promise<T>): Promise<T> {
    const pending = this.#savepoint(fn, true);
    return this.tracksStatements ? this.track(pending) : pending;
  }

  /**
   * Makes what this scope writes from here on undoable on its own: on a
   * scope of `savepointOnDemand`, sends its SAVEPOINT (once); on any other
   * scope, nothing to do (undefined).
   * @internal
   */
  guard(): Promise<void> | undefined {
    const name = this.unopened;
    if (name === undefined) return undefined;
    if (this.wroteUnguarded) {
      return Promise.reject(
        new RunledgerError(
          "internal_error",
          "a savepoint on demand was asked for after a write it cannot cover; report this as a bug",
        ),
      );
    }
    this.checkUsable("open a savepoint");
    this.unopened = undefined;
    return this.executor.execute(`SAVEPOINT ${name}`).then(() => {
      this.savepointOpen = true;
    });
  }

  /**
   * `savepoint` for core's own work where every statement runs now
   * (`runsNow`, asked first): `fn` runs its statements on this scope with
   * `executeNow` and returns without a promise. Its SAVEPOINT is sent before
   * `fn` runs; RELEASE after it returns; ROLLBACK TO and RELEASE when it
   * throws, and the error is rethrown — as `savepoint` does, undo failures
   * included. So a step that writes several rows on a synchronous driver
   * makes no promise.
   * @internal
   */
  savepointNow<T>(fn: () => T): T {
    if (!this.runsNow) {
      throw new RunledgerError(
        "internal_error",
        "a savepoint run now was asked for where statements do not run now; report this as a bug",
      );
    }
    const name = this.#savepoints.nameAt(this.depth + 1);
    this.executeNow(`SAVEPOINT ${name}`, []);
    try {
      const result = fn();
      this.executeNow(`RELEASE ${name}`, []);
      return result;
    } catch (error) {
      this.#savepoints.rollBackNow(name, error);
      throw error;
    }
  }

  async #savepoint<T>(fn: (tx: WriteScope) => Promise<T>, onDemand: boolean): Promise<T> {
    this.checkUsable("open a savepoint");
    // A savepoint nested in one on demand needs the outer one open to undo into.
    const guarding = this.guard();
    // Claimed before the first await, so a second savepoint beside it is refused.
    this.childOpen = true;
    try {
      if (guarding !== undefined) await guarding;
      const name = this.#savepoints.nameAt(this.depth + 1);
      const deferred = onDemand && this.#savepoints.deferrable;
      if (!deferred) await this.executor.execute(`SAVEPOINT ${name}`);
      const child = new WriteScope(this.executor, this.#savepoints, this.state, this);
      if (deferred) child.unopened = name;
      else child.savepointOpen = true;
      try {
        const result = await fn(child);
        if (child.hasEscapedWork) throw escaped("savepoint");
        endScope(child);
        if (this.ended) throw closed("release a savepoint");
        if (child.savepointOpen) await this.executor.execute(`RELEASE ${name}`);
        return result;
      } catch (error) {
        endScope(child, () =>
          isRunledgerError(error, "callback_escaped") ? error : escaped("savepoint"),
        );
        if (this.ended) throw error;
        if (child.savepointOpen) await this.#savepoints.rollBack(name, error);
        // A write no savepoint covers cannot be undone alone: the transaction never commits.
        else if (child.wroteUnguarded) this.state.doomed ??= error;
        throw error;
      }
    } finally {
      this.childOpen = false;
    }
  }
}

/** A scope with no write capability: a consistent snapshot. */
export class ReadScope extends Scope {
  protected override translate(error: unknown): unknown {
    if (isRunledgerError(error, "read_only")) {
      return new RunledgerError(
        "write_in_read",
        "a write was attempted inside lease.read(); writes belong in lease.transact()",
        { cause: error, ...(error.sqliteCode ? { sqliteCode: error.sqliteCode } : {}) },
      );
    }
    return error;
  }
}

function closed(action: string): RunledgerError {
  return new RunledgerError(
    "transaction_closed",
    `cannot ${action}: this transaction's callback has already ended; ` +
      "do all work inside the callback and await it before returning",
  );
}

export function escaped(what: "transaction" | "savepoint"): RunledgerError {
  return new RunledgerError(
    "callback_escaped",
    `the ${what} callback returned before awaiting work it started on tx (a call still ` +
      `running, or finished but never awaited); the ${what} was rolled back and nothing of it ` +
      "was written. Await every call on tx, and every savepoint, before returning",
  );
}
