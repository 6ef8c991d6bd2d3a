import type { InValue, ResultSet } from "@libsql/client";
import { normalizeInteger, type Row, type SqlValue } from "@runledger/core/port";

/** Blobs go in as a Buffer view over the same bytes (no copy). */
export function toDriverParams(params: readonly SqlValue[]): InValue[] {
  const out = new Array<InValue>(params.length);
  for (let i = 0; i < params.length; i++) {
    const value = params[i] as SqlValue;
    out[i] =
      value instanceof Uint8Array && !Buffer.isBuffer(value)
        ? Buffer.from(value.buffer, value.byteOffset, value.byteLength)
        : value;
  }
  return out;
}

/** Rows as the port promises them: plain objects, exact integers, Uint8Array blobs. */
export function fromResultSet(result: ResultSet): Row[] {
  const { columns } = result;
  const rows = new Array<Row>(result.rows.length);
  for (let r = 0; r < result.rows.length; r++) {
    const source = result.rows[r] as unknown as Record<string, unknown>;
    const row: Row = {};
    for (const column of columns) row[column] = fromDriverValue(source[column]);
    rows[r] = row;
  }
  return rows;
}

function fromDriverValue(value: unknown): SqlValue {
  if (typeof value === "bigint") return normalizeInteger(value);
  if (value instanceof ArrayBuffer) return new Uint8Array(value);
  return value as SqlValue;
}
