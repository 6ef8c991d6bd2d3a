/**
 * A driver wrapper that changes one value core binds, so that SQLite itself
 * refuses the statement: the way to provoke a real constraint failure (a
 * CHECK, a foreign key) at a chosen statement of core's, which no valid use
 * of the API can reach. Nothing is answered in SQLite's place: the rewritten
 * statement runs, and fails, in the real database.
 */
import type {
  BeginMode,
  ConnectionSettings,
  Driver,
  DriverConnection,
  DriverTransaction,
  QueryResult,
  SqlValue,
} from "@runledger/core/port";

/** Which bound value to replace, and with what. */
export interface ValueRewrite {
  /** Only statements whose SQL matches are rewritten. */
  readonly statement: RegExp;
  /** Every bound parameter equal to this string (a sentinel the test chose) is replaced. */
  readonly from: string;
  readonly to: SqlValue;
}

/**
 * Wraps a driver so that statements matching `rewrite.statement` run with
 * `rewrite.to` bound where core bound `rewrite.from`. `rewritten` counts the
 * statements changed, so a test can tell its rewrite was reached.
 */
export class ValueRewriter {
  readonly driver: Driver;
  #rewrite: ValueRewrite | undefined;
  #rewritten = 0;

  constructor(inner: Driver) {
    this.driver = {
      name: `${inner.name}+rewrite`,
      // Passed through: the runs under test hash and nest as on the real driver.
      ...(inner.hash === undefined ? {} : { hash: inner.hash }),
      ...(inner.asyncContext === undefined ? {} : { asyncContext: inner.asyncContext }),
      canonicalize: (location) => inner.canonicalize(location),
      open: async (location, options) =>
        new RewritingConnection(await inner.open(location, options), this),
    };
  }

  /** From now on, rewrites as `rewrite` says. */
  arm(rewrite: ValueRewrite): void {
    this.#rewrite = rewrite;
  }

  disarm(): void {
    this.#rewrite = undefined;
  }

  /** How many statements were rewritten so far. */
  get rewritten(): number {
    return this.#rewritten;
  }

  /** @internal The parameters a statement runs with. */
  params(sql: string, params: readonly SqlValue[] | undefined): readonly SqlValue[] | undefined {
    const rewrite = this.#rewrite;
    if (rewrite === undefined || params === undefined || !rewrite.statement.test(sql)) {
      return params;
    }
    if (!params.includes(rewrite.from)) return params;
    this.#rewritten++;
    return params.map((value) => (value === rewrite.from ? rewrite.to : value));
  }
}

abstract class RewritingStatements<Inner extends DriverConnection | DriverTransaction> {
  protected readonly inner: Inner;
  protected readonly rewriter: ValueRewriter;

  constructor(inner: Inner, rewriter: ValueRewriter) {
    this.inner = inner;
    this.rewriter = rewriter;
  }

  execute(sql: string, params?: readonly SqlValue[]): Promise<QueryResult> {
    return this.inner.execute(sql, this.rewriter.params(sql, params));
  }

  executeScript(sql: string): Promise<void> {
    return this.inner.executeScript(sql);
  }
}

class RewritingConnection
  extends RewritingStatements<DriverConnection>
  implements DriverConnection
{
  /** Offered where the inner connection offers it, so that a step begun now is rewritten too. */
  readonly beginNow: ((mode: BeginMode) => DriverTransaction) | undefined;

  constructor(inner: DriverConnection, rewriter: ValueRewriter) {
    super(inner, rewriter);
    if (inner.beginNow !== undefined) {
      this.beginNow = (mode) => new RewritingTransaction(inner.beginNow!(mode), this.rewriter);
    }
  }

  get remote(): boolean | undefined {
    return this.inner.remote;
  }

  async begin(mode: BeginMode): Promise<DriverTransaction> {
    return new RewritingTransaction(await this.inner.begin(mode), this.rewriter);
  }

  configure(settings: ConnectionSettings): Promise<void> {
    return this.inner.configure(settings);
  }

  close(): Promise<void> {
    return this.inner.close();
  }
}

class RewritingTransaction
  extends RewritingStatements<DriverTransaction>
  implements DriverTransaction
{
  /** Offered where the inner transaction offers them; a statement run now is rewritten as `execute`'s. */
  readonly executeNow: ((sql: string, params: readonly SqlValue[]) => QueryResult) | undefined;
  readonly commitNow: (() => void) | undefined;

  constructor(inner: DriverTransaction, rewriter: ValueRewriter) {
    super(inner, rewriter);
    if (inner.executeNow !== undefined) {
      this.executeNow = (sql, params) =>
        inner.executeNow!(sql, this.rewriter.params(sql, params) ?? []);
    }
    if (inner.commitNow !== undefined) this.commitNow = () => inner.commitNow!();
  }

  get active(): boolean {
    return this.inner.active;
  }

  commit(): Promise<void> {
    return this.inner.commit();
  }

  rollback(): Promise<void> {
    return this.inner.rollback();
  }
}
