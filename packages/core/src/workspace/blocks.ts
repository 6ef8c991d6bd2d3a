/**
 * Memory for the bytes an edit builds: node encodings and deltas.
 *
 * A Uint8Array of more than a few dozen bytes made on its own gets a
 * backing store outside the JavaScript heap: allocated with malloc, counted
 * as external memory, and freed on the engine's background thread once the
 * array is collected. That costs microseconds an array (Node 20 on the bench
 * machine: ~3 µs for a 1 KiB one), and a step that adds a file to a large
 * directory builds a few such nodes and deltas. Carved from a shared block
 * instead, each is a view: the cost is one block per 64 KiB of bytes built.
 *
 * A block stays alive while any view into it does, so only bytes whose life
 * is bounded come from blocks:
 * - a delta is written by the apply that built it, then dropped;
 * - a node's bytes are kept by the node cache within its byte budget
 *   (NodeCache.BYTES_KEPT, those kept longest dropped first), and by nothing
 *   longer — except the bytes of a node small enough to be held in its
 *   parent's entry (INLINE_NODE_MAX), which every cached parent keeps: those
 *   are arrays of their own (node.ts, `header`).
 * So the blocks alive are about those the budget's bytes were carved from.
 */
/** The size of a block. */
const BLOCK_SIZE = 64 * 1024;
/** Bytes longer than this get an array of their own: a block is not spent on one node. */
const LARGEST_CARVED = 16 * 1024;

let block = new ArrayBuffer(0);
let used = 0;

/** `length` zeroed bytes, carved from the current block (a new one when it is full). */
export function blockBytes(length: number): Uint8Array {
  if (length > LARGEST_CARVED) return new Uint8Array(length);
  if (used + length > block.byteLength) {
    block = new ArrayBuffer(BLOCK_SIZE);
    used = 0;
  }
  // Zeroed: a block is new and each byte of it is handed out once.
  const bytes = new Uint8Array(block, used, length);
  used += length;
  return bytes;
}
