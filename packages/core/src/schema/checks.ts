/**
 * The CHECK constraints of a manifest, proved row by row. SQLite's
 * `PRAGMA integrity_check` skips CHECK constraints on a read-only
 * connection, so a deep check that relied on it would pass a damaged file
 * read-only that it fails read-write. Here each table's CHECK expressions
 * are taken from the manifest's own CREATE statements — so they can never
 * drift from the schema — and each is run as a query on any connection:
 * `SELECT key FROM t WHERE NOT coalesce((expr), 1)` (a CHECK passes when its
 * expression is true or NULL).
 */
import type { Executor } from "../port/driver.js";
import { RunledgerError } from "../port/errors.js";
import { keysetRows } from "../port/keyset.js";
import type { Row, SqlValue } from "../port/values.js";
import type { SchemaManifest } from "./manifest.js";

/** One CHECK of one table, and how its rows are named. */
export interface CheckConstraint {
  readonly table: string;
  /** The expression between the parentheses, exactly as the CREATE statement has it. */
  readonly expression: string;
  /** The column that names a row (the primary key column), or `rowid`. */
  readonly key: string;
}

/** Every CHECK of every table the manifest creates, in the order they are written. */
export function checkConstraints(manifest: SchemaManifest): CheckConstraint[] {
  const found: CheckConstraint[] = [];
  for (const object of manifest.objects) {
    if (object.type !== "table" || object.sql === null) continue;
    const key = keyColumn(object.sql);
    for (const expression of checkExpressions(object.sql)) {
      found.push({ table: object.name, expression, key });
    }
  }
  return found;
}

/**
 * The rows that break a CHECK, at most `limit` for each, as lines for a
 * report: "journal sequence 5 breaks CHECK (…)".
 */
export async function checkViolations(
  executor: Executor,
  manifest: SchemaManifest,
  limit = 10,
): Promise<string[]> {
  const problems: string[] = [];
  for (const check of checkConstraints(manifest)) {
    for (const at of await breaking(executor, check, limit)) {
      problems.push(`${check.table} ${check.key} ${shown(at)} breaks CHECK (${check.expression})`);
    }
  }
  return problems;
}

/**
 * The keys of at most `limit` rows that break `check`. An expression can
 * fail on a damaged value instead of answering false (json_type on text
 * that is not JSON): then each row is evaluated on its own, and a row whose
 * evaluation fails breaks the CHECK too — SQLite would refuse to store it.
 */
async function breaking(
  executor: Executor,
  { table, expression, key }: CheckConstraint,
  limit: number,
): Promise<unknown[]> {
  const test = `NOT coalesce((${expression}), 1)`;
  try {
    const { rows } = await executor.execute(
      `SELECT ${key} AS at FROM ${table} WHERE ${test} LIMIT ${limit}`,
    );
    return rows.map((row) => row.at);
  } catch {
    // Row by row, below.
  }
  const found: unknown[] = [];
  const keys = keysetRows<unknown, Row>({
    start: null,
    page: async (after, size) =>
      (
        await (after === null
          ? executor.execute(`SELECT ${key} AS at FROM ${table} ORDER BY ${key} LIMIT ?`, [size])
          : executor.execute(
              `SELECT ${key} AS at FROM ${table} WHERE ${key} > ? ORDER BY ${key} LIMIT ?`,
              [after as SqlValue, size],
            ))
      ).rows,
    keyOf: (row) => row.at,
    limit: 500,
  });
  for await (const { at } of keys) {
    const holds = await executor
      .execute(`SELECT ${test} AS broken FROM ${table} WHERE ${key} = ?`, [at as SqlValue])
      .then(
        ({ rows }) => !rows[0]?.broken,
        () => false,
      );
    if (!holds) found.push(at);
    if (found.length === limit) break;
  }
  return found;
}

/** A row's key as a report shows it: a number as it is, a text quoted, a blob in hex. */
function shown(value: unknown): string {
  if (typeof value === "string") return JSON.stringify(value);
  if (!(value instanceof Uint8Array)) return String(value);
  let hex = "";
  for (const byte of value) hex += byte.toString(16).padStart(2, "0");
  return `X'${hex}'`;
}

/** The expression of every CHECK in a CREATE TABLE statement (outside string literals). */
export function checkExpressions(sql: string): string[] {
  const found: string[] = [];
  const pattern = /\bCHECK\s*\(/gi;
  for (let at = 0; at < sql.length; ) {
    const quote = nextQuote(sql, at);
    pattern.lastIndex = at;
    const match = pattern.exec(sql);
    if (match === null) break;
    if (quote !== -1 && quote < match.index) {
      at = afterQuoted(sql, quote);
      continue;
    }
    const open = match.index + match[0].length - 1;
    const close = closingParen(sql, open);
    found.push(sql.slice(open + 1, close));
    at = close + 1;
  }
  return found;
}

/**
 * The column a row is named by: the one a column definition declares
 * PRIMARY KEY (for an INTEGER one, the rowid itself), else `rowid`.
 */
function keyColumn(sql: string): string {
  const body = sql.slice(sql.indexOf("(") + 1, closingParen(sql, sql.indexOf("(")));
  for (const definition of topLevelParts(body)) {
    const words = definition.trim().split(/\s+/);
    const name = words[0] ?? "";
    if (/^(CHECK|PRIMARY|UNIQUE|FOREIGN|CONSTRAINT)$/i.test(name)) continue;
    if (/\bPRIMARY\s+KEY\b/i.test(definition)) return name;
  }
  return "rowid";
}

/** The parts of a list separated by commas outside parentheses and string literals. */
function topLevelParts(body: string): string[] {
  const parts: string[] = [];
  let depth = 0;
  let start = 0;
  for (let at = 0; at < body.length; at++) {
    const c = body[at];
    if (c === "'" || c === '"') at = afterQuoted(body, at) - 1;
    else if (c === "(") depth++;
    else if (c === ")") depth--;
    else if (c === "," && depth === 0) {
      parts.push(body.slice(start, at));
      start = at + 1;
    }
  }
  parts.push(body.slice(start));
  return parts;
}

/** The index of the parenthesis closing the one at `open`, skipping string literals. */
function closingParen(sql: string, open: number): number {
  let depth = 0;
  for (let at = open; at < sql.length; at++) {
    const c = sql[at];
    if (c === "'" || c === '"') at = afterQuoted(sql, at) - 1;
    else if (c === "(") depth++;
    else if (c === ")" && --depth === 0) return at;
  }
  throw new RunledgerError(
    "internal_error",
    `a schema statement has unbalanced parentheses: ${sql}`,
  );
}

function nextQuote(sql: string, from: number): number {
  const single = sql.indexOf("'", from);
  const double = sql.indexOf('"', from);
  if (single === -1) return double;
  if (double === -1) return single;
  return Math.min(single, double);
}

/** The index just after the literal opening at `open` (a doubled quote stays inside it). */
function afterQuoted(sql: string, open: number): number {
  const quote = sql[open]!;
  for (let at = open + 1; at < sql.length; at++) {
    if (sql[at] !== quote) continue;
    if (sql[at + 1] === quote) at++;
    else return at + 1;
  }
  return sql.length;
}
