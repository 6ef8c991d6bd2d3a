/**
 * The values that cross the port. Every adapter must round-trip each of them
 * exactly: integers inside ±(2^53−1) come back as `number`, integers beyond as
 * `bigint`, blobs as plain `Uint8Array` (never a driver's Buffer or ArrayBuffer).
 */
export type SqlValue = null | number | bigint | string | Uint8Array;

/** One result row, keyed by column name. */
export type Row = Record<string, SqlValue>;

/**
 * An integer read from SQLite as bigint, narrowed to `number` when that is
 * exact. Converting first and asking whether the result is a safe integer
 * decides the same as comparing with ±(2^53−1) as bigints (a bigint beyond
 * converts to a number beyond, or rounds to ±2^53, which is not safe), at a
 * fraction of the cost: every write's row id passes through here.
 */
export function normalizeInteger(value: bigint): number | bigint {
  const number = Number(value);
  return Number.isSafeInteger(number) ? number : value;
}

export function isSqlValue(value: unknown): value is SqlValue {
  return (
    value === null ||
    typeof value === "number" ||
    typeof value === "bigint" ||
    typeof value === "string" ||
    value instanceof Uint8Array
  );
}

/** A byte view that is a plain Uint8Array, whatever subclass (Buffer) it arrived as. */
export function plainBytes(bytes: Uint8Array): Uint8Array {
  return Object.getPrototypeOf(bytes) === Uint8Array.prototype
    ? bytes
    : new Uint8Array(bytes.buffer, bytes.byteOffset, bytes.byteLength);
}

/**
 * A driver's row, a plain object keyed by column name, made what the port
 * promises in place: integers narrowed by `normalizeInteger`, blobs plain
 * `Uint8Array` (`plainBytes`; a blob read as an ArrayBuffer, as libSQL's
 * engine reads one, viewed as one). In place, because a row is read once and
 * copying every one would cost more than the conversion.
 */
export function normalizeRow(row: Record<string, unknown>): Row {
  for (const key in row) {
    const value = row[key];
    if (typeof value === "bigint") row[key] = normalizeInteger(value);
    else if (value instanceof Uint8Array) row[key] = plainBytes(value);
    else if (value instanceof ArrayBuffer) row[key] = new Uint8Array(value);
  }
  return row as Row;
}
