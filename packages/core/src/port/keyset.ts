/**
 * Keyset paging, written once. Every long read in core (the journal, the
 * commit log's ops and live keys, the read model's catalog and documents, a
 * unit's staged ops and batches, the workspace's objects) walks an ordered
 * key a page at a time, so that no read holds a whole table in memory and
 * no page costs more than the one before it (no OFFSET): ask for the rows
 * after the last key seen, stop at the first short page.
 */
import { RunledgerError } from "./errors.js";

/** How one ordered read is paged. */
export interface Keyset<Key, Row> {
  /** The key before the first row. */
  readonly start: Key;
  /** At most `limit` rows after `after`, in key order. */
  readonly page: (after: Key, limit: number) => Promise<readonly Row[]>;
  /** A row's key: the next page starts after the last row's. */
  readonly keyOf: (row: Row) => Key;
  /** Rows per page, at least 1. */
  readonly limit: number;
}

/** Every non-empty page of the read, in key order; ends after the first short page. */
export async function* keysetPages<Key, Row>(keyset: Keyset<Key, Row>): AsyncGenerator<Row[]> {
  const { page, keyOf, limit } = keyset;
  if (!Number.isSafeInteger(limit) || limit < 1) {
    // A page of 0 rows would ask for the same empty page forever.
    throw new RunledgerError(
      "invalid_argument",
      `a page size is a whole number of at least 1; got ${String(limit)}`,
    );
  }
  let after = keyset.start;
  for (;;) {
    const rows = [...(await page(after, limit))];
    if (rows.length > 0) yield rows;
    if (rows.length < limit) return;
    after = keyOf(rows[rows.length - 1]!);
  }
}

/** Every row of the read, in key order, fetched a page at a time. */
export async function* keysetRows<Key, Row>(keyset: Keyset<Key, Row>): AsyncGenerator<Row> {
  for await (const rows of keysetPages(keyset)) yield* rows;
}
