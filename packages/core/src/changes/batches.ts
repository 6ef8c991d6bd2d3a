/**
 * Commits are bounded: at most MAX_COMMIT_OPS ops per partition per batch,
 * so one commit is one transaction of bounded size. A larger change is split
 * into ordered batches; the order of ops is kept across them.
 */
import type { TypedChange } from "./change.js";

export const MAX_COMMIT_OPS = 10_000;

/** Splits items into consecutive slices of at most `size`. */
export function splitIntoBatches<T>(items: readonly T[], size: number = MAX_COMMIT_OPS): T[][] {
  if (!Number.isSafeInteger(size) || size < 1) throw new RangeError(`bad batch size ${size}`);
  const batches: T[][] = [];
  for (let start = 0; start < items.length; start += size) {
    batches.push(items.slice(start, start + size));
  }
  return batches;
}

/** One change as the ordered changes of at most MAX_COMMIT_OPS ops it commits as. */
export function changeBatches(change: TypedChange): TypedChange[] {
  if (change.ops.length <= MAX_COMMIT_OPS) return [change];
  return splitIntoBatches(change.ops).map((ops) => ({ ...change, ops }));
}
