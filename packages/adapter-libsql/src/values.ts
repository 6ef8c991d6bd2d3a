import type { InValue, ResultSet } from "@libsql/client";
import { normalizeInteger, type Row, type SqlValue } from "@runledger/core/port";

/**
 * Blobs from this size up are bound as a copy of their own (see `toDriverParams`).
 * A workspace chunk (256 KiB) is above it; digests, ids and records are far below.
 */
export const COPIED_BLOB_BYTES = 64 * 1024;

/**
 * The port's parameters as the client takes them. A small blob goes in as a
 * Buffer view over the same bytes (no copy). A large one goes in as a fresh
 * copy: the client's native statement keeps its own copy of every bound blob
 * until V8 collects the statement, and V8 does not see that memory, so
 * nothing would prompt a collection while a large file streams in. A copy
 * made here is memory V8 does count, so its collector runs in step with the
 * bytes bound (measured: 100 MiB written in 256 KiB chunks peaked 16 MiB
 * lower, at no cost in speed — the copy is small next to the insert).
 */
export function toDriverParams(params: readonly SqlValue[]): InValue[] {
  const out = new Array<InValue>(params.length);
  for (let i = 0; i < params.length; i++) {
    const value = params[i] as SqlValue;
    if (!(value instanceof Uint8Array)) out[i] = value;
    else if (value.byteLength >= COPIED_BLOB_BYTES) out[i] = Buffer.from(value);
    else if (Buffer.isBuffer(value)) out[i] = value;
    else out[i] = Buffer.from(value.buffer, value.byteOffset, value.byteLength);
  }
  return out;
}

/** Rows as the port promises them: plain objects, exact integers, Uint8Array blobs. */
export function fromResultSet(result: ResultSet): Row[] {
  const { columns } = result;
  const rows = new Array<Row>(result.rows.length);
  for (let r = 0; r < result.rows.length; r++) {
    // By position: the client's rows are array-like, so a column named like one of
    // an array's own properties ("length") would read that property by name.
    const source = result.rows[r] as unknown as ArrayLike<unknown>;
    const row: Row = {};
    for (let c = 0; c < columns.length; c++) row[columns[c]!] = fromDriverValue(source[c]);
    rows[r] = row;
  }
  return rows;
}

function fromDriverValue(value: unknown): SqlValue {
  if (typeof value === "bigint") return normalizeInteger(value);
  if (value instanceof ArrayBuffer) return new Uint8Array(value);
  return value as SqlValue;
}
