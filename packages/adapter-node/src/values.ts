import { normalizeInteger, plainBytes, type Row } from "@runledger/core/port";

/** A row as the port promises it: exact integers, plain Uint8Array blobs. */
export function fromDriverRow(row: Record<string, unknown>): Row {
  for (const key in row) {
    const value = row[key];
    if (typeof value === "bigint") row[key] = normalizeInteger(value);
    else if (value instanceof Uint8Array) row[key] = plainBytes(value);
  }
  return row as Row;
}
