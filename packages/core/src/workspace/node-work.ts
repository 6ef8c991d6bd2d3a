/**
 * Tree work that reads nodes, written once and run without a promise when it
 * can. A directory edit touches a handful of nodes, and in the steady state
 * every one of them is cached or was built by the same operation; making
 * each step `async` only for the rare node that must come from the database
 * cost a promise per step (and, with async context tracking on, a hook call
 * per promise).
 *
 * So the tree code is a generator: it takes a node it has at hand directly
 * (`NodeLoader.known`) and yields the id of one it has not. `settle` runs
 * such work synchronously and returns its result as it is; only at the
 * first yield does it turn into a promise, read the node (`NodeLoader.load`)
 * and resume the work where it stopped — nothing is computed twice.
 * `settleNow` is for a caller that has a way of its own for a node not at
 * hand: it never reads, and gives the work up at its first yield.
 */
import type { DirectoryNode } from "./node.js";
import type { NodeLoader } from "./node-loader.js";

/** Work that yields the id of each node it needs and is not at hand, and is resumed with that node. */
export type NodeWork<T> = Generator<Uint8Array, T, DirectoryNode>;

/** Runs work to its end: its result directly when every node was at hand, else a promise of it. */
export function settle<T>(loader: NodeLoader, work: NodeWork<T>): T | Promise<T> {
  const step = work.next();
  return step.done ? step.value : resume(loader, work, step.value);
}

async function resume<T>(loader: NodeLoader, work: NodeWork<T>, first: Uint8Array): Promise<T> {
  let id = first;
  for (;;) {
    const step = work.next(await loader.load(id));
    if (step.done) return step.value;
    id = step.value;
  }
}

/** What `settleNow` answers when the work needed a node not at hand. */
export const NOT_AT_HAND: unique symbol = Symbol("not at hand");

/**
 * Runs work to its end when every node it needs is at hand; at its first
 * yield, gives the work up (nothing read) and answers NOT_AT_HAND.
 */
export function settleNow<T>(work: NodeWork<T>): T | typeof NOT_AT_HAND {
  const step = work.next();
  if (step.done) return step.value;
  work.return(undefined as T);
  return NOT_AT_HAND;
}
