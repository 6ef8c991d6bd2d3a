/**
 * Digests travel as lower-case hex in the API (what `sha256sum` prints) and
 * as 32 raw bytes in the database (half the size, and compared as blobs).
 */
import type { Expectation } from "../changes/ops.js";
import { fromHex, toHex } from "../port/bytes.js";
import type { SqlValue } from "../port/values.js";

export function hexOrNull(value: SqlValue | undefined): string | null {
  return value instanceof Uint8Array ? toHex(value) : null;
}

/** An expectation as its two columns: kind, and the digest for `{ sha256 }`. */
export function expectationColumns(
  expect: Expectation | undefined,
): [string | null, Uint8Array | null] {
  if (expect === undefined) return [null, null];
  if (typeof expect === "string") return [expect, null];
  return ["sha256", fromHex(expect.sha256)];
}

/** The two columns back to an expectation. */
export function expectationOf(kind: SqlValue | undefined, digest: SqlValue | undefined) {
  if (kind === "absent" || kind === "present") return kind;
  if (kind === "sha256" && digest instanceof Uint8Array) return { sha256: toHex(digest) };
  return null;
}
