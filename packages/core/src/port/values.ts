/**
 * The values that cross the port. Every adapter must round-trip each of them
 * exactly: integers inside ±(2^53−1) come back as `number`, integers beyond as
 * `bigint`, blobs as plain `Uint8Array` (never a driver's Buffer or ArrayBuffer).
 */
export type SqlValue = null | number | bigint | string | Uint8Array;

/** One result row, keyed by column name. */
export type Row = Record<string, SqlValue>;

const MAX_SAFE = BigInt(Number.MAX_SAFE_INTEGER);
const MIN_SAFE = BigInt(Number.MIN_SAFE_INTEGER);

/** An integer read from SQLite as bigint, narrowed to `number` when that is exact. */
export function normalizeInteger(value: bigint): number | bigint {
  return value >= MIN_SAFE && value <= MAX_SAFE ? Number(value) : value;
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
