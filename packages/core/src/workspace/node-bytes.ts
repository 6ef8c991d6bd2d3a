/**
 * A stored node's bytes. A node's row holds them whole, or as a delta onto
 * the node it replaced (delta.ts): reading it follows the chain of deltas
 * down to a whole node and rebuilds upwards.
 */
import type { Executor } from "../port/driver.js";
import { applyDelta, MAX_CHAIN } from "./delta.js";
import { OBJECT_BY_ID, objectKey } from "./object-key.js";
import { BYTES, DELTA } from "./object-rows.js";
import type { RebuiltNodes } from "./rebuilt-nodes.js";

const LOAD = `SELECT kind, size, depth, data FROM workspace_object WHERE ${OBJECT_BY_ID}`;

/** A stored node's bytes, or why there are none: no row at all, or a damaged row or chain. */
export type NodeBytes =
  | { readonly bytes: Uint8Array; readonly missing?: undefined; readonly damage?: undefined }
  | { readonly missing: true; readonly bytes?: undefined; readonly damage?: undefined }
  | { readonly damage: string; readonly bytes?: undefined; readonly missing?: undefined };

/**
 * Reads a stored node's bytes, following a delta chain down to its whole
 * node (at most MAX_CHAIN rows below it, each strictly shallower than the
 * one above) and rebuilding upwards. With `rebuilt`, the walk stops at the
 * first node found there, and every node it rebuilds is added.
 */
export async function readNodeBytes(
  executor: Executor,
  id: Uint8Array,
  rebuilt?: RebuiltNodes,
): Promise<NodeBytes> {
  const chain: ChainLink[] = [];
  let at = id;
  let above = MAX_CHAIN + 1;
  for (;;) {
    const known = rebuilt?.get(at);
    if (known !== undefined) {
      if (known.depth >= above) return { damage: "a delta chain is not well-formed" };
      return rebuild(known.bytes, chain, rebuilt);
    }
    const row = (await executor.execute(LOAD, objectKey(at))).rows[0];
    if (row === undefined) {
      return chain.length === 0 ? { missing: true } : { damage: "the base of a delta is missing" };
    }
    const kind = Number(row.kind);
    const data = row.data as Uint8Array;
    if (kind === BYTES) {
      rebuilt?.set(at, data, 0);
      return rebuild(data, chain, rebuilt);
    }
    const depth = Number(row.depth);
    if (kind !== DELTA || depth < 1 || depth >= above || data.length <= 32) {
      return { damage: kind === DELTA ? "a delta chain is not well-formed" : "not a node" };
    }
    chain.push({ id: at, data, size: Number(row.size), depth });
    above = depth;
    at = data.subarray(0, 32);
  }
}
/** A delta row met on the way down a chain: its node's id, its data, the node's size, its depth. */
interface ChainLink {
  readonly id: Uint8Array;
  readonly data: Uint8Array;
  readonly size: number;
  readonly depth: number;
}

/** Applies a chain's deltas, deepest base first, onto `base`'s bytes. */
function rebuild(
  base: Uint8Array,
  chain: readonly ChainLink[],
  rebuilt: RebuiltNodes | undefined,
): NodeBytes {
  let bytes = base;
  for (let i = chain.length - 1; i >= 0; i--) {
    const link = chain[i]!;
    const next = applyDelta(bytes, link.data, link.size);
    if (next === undefined) return { damage: "a delta does not rebuild its node" };
    rebuilt?.set(link.id, next, link.depth);
    bytes = next;
  }
  return { bytes };
}
