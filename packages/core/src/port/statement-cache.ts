/**
 * Prepared statements kept by their SQL, for a driver whose connection
 * prepares statements itself (better-sqlite3, libSQL's embedded engine):
 * the few statements core sends on every step are prepared once, and the
 * least recently used is dropped past a size, so a connection that sees
 * many different statements holds a bounded number.
 */
export class StatementCache<S> {
  readonly #size: number;
  readonly #prepare: (sql: string) => S;
  readonly #statements = new Map<string, S>();

  /** `prepare` makes a statement the cache does not hold; what it throws reaches the caller of `get`. */
  constructor(size: number, prepare: (sql: string) => S) {
    this.#size = size;
    this.#prepare = prepare;
  }

  /** The statement for `sql`, prepared on first use. */
  get(sql: string): S {
    const statements = this.#statements;
    const cached = statements.get(sql);
    if (cached !== undefined) {
      // Recency matters only once the cache is about to drop one: until then a
      // hit costs one lookup.
      if (statements.size >= this.#size - 1) {
        statements.delete(sql);
        statements.set(sql, cached);
      }
      return cached;
    }
    const statement = this.#prepare(sql);
    if (statements.size >= this.#size) {
      const oldest = statements.keys().next().value;
      if (oldest !== undefined) statements.delete(oldest);
    }
    statements.set(sql, statement);
    return statement;
  }

  /** Forgets the statement for `sql` (one a failure left unusable); the next `get` prepares it again. */
  delete(sql: string): void {
    this.#statements.delete(sql);
  }

  /** Forgets every statement: before the connection closes. */
  clear(): void {
    this.#statements.clear();
  }
}
