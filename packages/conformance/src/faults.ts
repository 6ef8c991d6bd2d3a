import { RunledgerError } from "@runledger/core";
import type {
  BeginMode,
  ConnectionSettings,
  Driver,
  DriverConnection,
  DriverTransaction,
  QueryResult,
  SqlValue,
  StagedDatabase,
  StageOptions,
} from "@runledger/core/port";

/**
 * Which statement to fail. Statements are counted across every connection the
 * wrapped driver opens, in the order they are issued: `execute` and
 * `executeScript` by their SQL, and `begin`, `commit`, `rollback` as
 * "BEGIN IMMEDIATE" / "BEGIN DEFERRED", "COMMIT", "ROLLBACK" — and, with
 * `{ stage: true }`, a staged database's statements and its "PUBLISH" (a copy placed counts as one too).
 */
export interface FaultPlan {
  /** Only statements whose SQL matches count. Default: every statement. */
  readonly match?: RegExp;
  /** Fail the nth counted statement (1-based). */
  readonly nth: number;
  /** Keep failing every counted statement after the nth too. Default false. */
  readonly persist?: boolean;
  /**
   * Inside a transaction, end it first, as SQLite does after some failures
   * (an I/O error, a full disk): a real ROLLBACK runs on the session, then the
   * failure is thrown. Default false: the transaction stays open.
   */
  readonly endsTransaction?: boolean;
  /**
   * Instead of failing the nth statement, kill this process with SIGKILL
   * before it runs (no rollback, no close, no exit handler): what a crash at
   * that point leaves behind. For child processes only. Default false.
   */
  readonly kill?: boolean;
}

/**
 * Wraps a driver so that tests can fail exactly one chosen statement (or every
 * one from it on) without the real statement running. The failure is a
 * RunledgerError `io_error` (SQLITE_IOERR) with `details.injected = true`;
 * with `endsTransaction` the session is really rolled back before it.
 *
 * The wrapper has no `stage` unless asked (`{ stage: true }`): by default
 * every database it creates is created in place, statement by statement.
 */
export class FaultInjector {
  readonly driver: Driver;
  /** Every statement issued through the wrapper, in order. */
  readonly statements: string[] = [];
  #plan: FaultPlan | undefined;
  #counted = 0;
  #fired = 0;

  constructor(inner: Driver, options: { readonly stage?: boolean } = {}) {
    const stage = options.stage === true ? inner.stage?.bind(inner) : undefined;
    this.driver = {
      ...(stage === undefined
        ? {}
        : {
            stage: async (location: string, options: StageOptions) => {
              const staged = await stage(location, options);
              return staged === undefined ? undefined : new FaultyStagedDatabase(staged, this);
            },
          }),
      name: `${inner.name}+faults`,
      canonicalize: (location) => inner.canonicalize(location),
      open: async (location, options) =>
        new FaultyConnection(await inner.open(location, options), this),
      ...(inner.remove === undefined ? {} : { remove: (location) => inner.remove!(location) }),
      ...(inner.listDatabases === undefined
        ? {}
        : { listDatabases: (directory) => inner.listDatabases!(directory) }),
    };
  }

  /** Arms a plan; counting starts from zero. */
  arm(plan: FaultPlan): void {
    this.#plan = plan;
    this.#counted = 0;
    this.#fired = 0;
  }

  disarm(): void {
    this.#plan = undefined;
  }

  /** How many faults have been injected since the plan was armed. */
  get fired(): number {
    return this.#fired;
  }

  /** Statements counted by the armed plan so far (the matching ones). */
  get counted(): number {
    return this.#counted;
  }

  /** @internal Called before each statement; throws when the plan says so. */
  check(sql: string): void {
    const fault = this.fault(sql);
    if (fault !== undefined) throw fault;
  }

  /** @internal Counts the statement; the failure to throw in its place, if the plan says so. */
  fault(sql: string): RunledgerError | undefined {
    this.statements.push(sql);
    const plan = this.#plan;
    if (plan === undefined || (plan.match !== undefined && !plan.match.test(sql))) return undefined;
    this.#counted++;
    if (this.#counted === plan.nth || (plan.persist === true && this.#counted > plan.nth)) {
      this.#fired++;
      if (plan.kill === true) process.kill(process.pid, "SIGKILL");
      return new RunledgerError(
        "io_error",
        `injected fault at statement ${this.#counted}: ${sql}`,
        {
          sqliteCode: "SQLITE_IOERR",
          details: { injected: true, sql },
        },
      );
    }
    return undefined;
  }

  /** @internal Whether a fault inside a transaction ends it first. */
  get endsTransaction(): boolean {
    return this.#plan?.endsTransaction === true;
  }
}

const BEGIN_SQL: Record<BeginMode, string> = {
  immediate: "BEGIN IMMEDIATE",
  deferred: "BEGIN DEFERRED",
};

/**
 * What the faulty connection and transaction share: both run `execute` and
 * `executeScript` by checking the statement against the plan first.
 */
abstract class FaultyStatements<Inner extends DriverConnection | DriverTransaction> {
  protected readonly inner: Inner;
  protected readonly faults: FaultInjector;

  constructor(inner: Inner, faults: FaultInjector) {
    this.inner = inner;
    this.faults = faults;
  }

  async execute(sql: string, params?: readonly SqlValue[]): Promise<QueryResult> {
    await this.#check(sql);
    return this.inner.execute(sql, params);
  }

  async executeScript(sql: string): Promise<void> {
    await this.#check(sql);
    return this.inner.executeScript(sql);
  }

  async #check(sql: string): Promise<void> {
    const fault = this.faults.fault(sql);
    if (fault === undefined) return;
    if (this.faults.endsTransaction) await this.endTransaction();
    throw fault;
  }

  /** What SQLite does to the session after a failure that ends it; nothing outside one. */
  protected async endTransaction(): Promise<void> {}
}

class FaultyConnection extends FaultyStatements<DriverConnection> implements DriverConnection {
  /** Offered where the inner connection offers it: a step begun now meets the plan too. */
  readonly beginNow: ((mode: BeginMode) => DriverTransaction) | undefined;

  constructor(inner: DriverConnection, faults: FaultInjector) {
    super(inner, faults);
    if (inner.beginNow !== undefined) {
      this.beginNow = (mode) => {
        this.faults.check(BEGIN_SQL[mode]);
        return new FaultyTransaction(inner.beginNow!(mode), this.faults);
      };
    }
  }

  /** Passed through: core reads it to decide what a remote server allows. */
  get remote(): boolean | undefined {
    return this.inner.remote;
  }

  async begin(mode: BeginMode): Promise<DriverTransaction> {
    this.faults.check(BEGIN_SQL[mode]);
    return new FaultyTransaction(await this.inner.begin(mode), this.faults);
  }

  configure(settings: ConnectionSettings): Promise<void> {
    return this.inner.configure(settings);
  }

  close(): Promise<void> {
    return this.inner.close();
  }
}

class FaultyStagedDatabase extends FaultyConnection implements StagedDatabase {
  readonly #staged: StagedDatabase;
  /** Offered where the inner database offers it; counted as "PUBLISH" too (it places a database). */
  readonly placeCopy: ((location: string) => Promise<boolean>) | undefined;

  constructor(staged: StagedDatabase, faults: FaultInjector) {
    super(staged, faults);
    this.#staged = staged;
    if (staged.placeCopy !== undefined) {
      this.placeCopy = async (location) => {
        const fault = this.faults.fault("PUBLISH");
        if (fault !== undefined) throw fault;
        return staged.placeCopy!(location);
      };
    }
  }

  /** Counted as "PUBLISH"; a fault there publishes nothing (the staged database is discarded). */
  async publish(): Promise<boolean> {
    const fault = this.faults.fault("PUBLISH");
    if (fault === undefined) return this.#staged.publish();
    await this.#staged.close();
    throw fault;
  }
}

class FaultyTransaction extends FaultyStatements<DriverTransaction> implements DriverTransaction {
  /** Offered where the inner transaction offers them, each checked against the plan as its promised twin is. */
  readonly executeNow: ((sql: string, params: readonly SqlValue[]) => QueryResult) | undefined;
  readonly commitNow: (() => void) | undefined;

  constructor(inner: DriverTransaction, faults: FaultInjector) {
    super(inner, faults);
    if (inner.executeNow !== undefined) {
      this.executeNow = (sql, params) => {
        const fault = this.faults.fault(sql);
        if (fault === undefined) return inner.executeNow!(sql, params);
        if (this.faults.endsTransaction) inner.executeNow!("ROLLBACK", []);
        throw fault;
      };
    }
    if (inner.commitNow !== undefined) {
      this.commitNow = () => {
        this.faults.check("COMMIT");
        inner.commitNow!();
      };
    }
  }

  get active(): boolean {
    return this.inner.active;
  }

  protected override async endTransaction(): Promise<void> {
    await this.inner.execute("ROLLBACK");
  }

  async commit(): Promise<void> {
    this.faults.check("COMMIT");
    return this.inner.commit();
  }

  async rollback(): Promise<void> {
    this.faults.check("ROLLBACK");
    return this.inner.rollback();
  }
}
