/**
 * The placeholders of statements sized by their data — the VALUES of a
 * multi-row statement, an IN list — built in one place, once per shape, and
 * how many rows one such statement takes.
 */

/** Rows per multi-row statement: few statements for many rows, well under SQLite's parameter limit. */
export const ROWS_PER_STATEMENT = 64;

const BUILT = new Map<string, string>();

/**
 * "(?, ?), (?, ?)" for `rows` rows of `columns` parameters each. An IN list
 * is one row: `IN ${placeholders(1, n)}`.
 */
export function placeholders(rows: number, columns: number): string {
  const shape = `${rows}x${columns}`;
  let text = BUILT.get(shape);
  if (text === undefined) {
    const row = `(${Array.from({ length: columns }, () => "?").join(", ")})`;
    text = Array.from({ length: rows }, () => row).join(", ");
    BUILT.set(shape, text);
  }
  return text;
}
