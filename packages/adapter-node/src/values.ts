import { normalizeInteger, plainBytes, type Row, type SqlValue } from "@runledger/core/port";

/** Parameters as better-sqlite3 binds them: blobs must be Buffers (a view, not a copy). */
export function toDriverParams(params: readonly SqlValue[]): unknown[] {
  const out = new Array<unknown>(params.length);
  for (let i = 0; i < params.length; i++) {
    const value = params[i];
    out[i] =
      value instanceof Uint8Array && !Buffer.isBuffer(value)
        ? Buffer.from(value.buffer, value.byteOffset, value.byteLength)
        : value;
  }
  return out;
}

/** A row as the port promises it: exact integers, plain Uint8Array blobs. */
export function fromDriverRow(row: Record<string, unknown>): Row {
  for (const key in row) {
    const value = row[key];
    if (typeof value === "bigint") row[key] = normalizeInteger(value);
    else if (value instanceof Uint8Array) row[key] = plainBytes(value);
  }
  return row as Row;
}
