/**
 * Lets libSQL's statement finalizers run.
 *
 * @libsql/client prepares a fresh native statement for every call (the
 * replica path), a local connection prepares each statement once but drops
 * the least used past its cache's size (local.ts), and a closed connection
 * leaves its native handle behind the same way. Their
 * memory is returned by Node-API finalizers, and Node runs those finalizers
 * from the event loop's check phase (setImmediate), not during garbage
 * collection. A caller whose loop only awaits promises — a workflow engine
 * writing step after step, a batch job opening run after run — never lets
 * the event loop turn, so every statement and connection ever used stays
 * allocated: measured, ~93 MiB of RSS per 1,000 workspace steps, ~220 MiB
 * per 1,000 opens of a run.
 *
 * A statement also keeps a copy of the blobs and text bound to it, so a large
 * file streamed in 256 KiB chunks would hold every chunk written since the
 * last turn — and since the last collection, which V8 starts on the memory
 * it can see: a large blob is therefore bound as a copy V8 counts (see
 * `toDriverParams`), and the turns come every BYTES_PER_TURN bound bytes.
 * Measured, 100 MiB written: +68 MiB of RSS with neither, +64 with a turn per
 * 4 MiB and the copy, +52–55 with a turn per 1 MiB and the copy (a turn per
 * 1 MiB alone changed nothing).
 *
 * So the adapter lets the event loop turn after STATEMENTS_PER_TURN
 * statements (a closed connection counts as one), or sooner once
 * BYTES_PER_TURN bytes were bound. One turn costs a few microseconds; with
 * it, RSS stays flat.
 *
 * The count is shared by every connection of this module (`finalizerTurns`):
 * a connection is short-lived — an open of a run issues a handful of
 * statements, then closes — so a count kept per connection would start again
 * at zero with each one and never reach the limit, while the finalizers it
 * waits for pile up across connections. The count must survive them.
 */
import type { SqlValue } from "@runledger/core/port";

export const STATEMENTS_PER_TURN = 256;
export const BYTES_PER_TURN = 1 * 1024 * 1024;

export class FinalizerTurns {
  #statements = 0;
  #bytes = 0;

  /**
   * Counts one statement and what it bound. Returns the turn to wait for
   * when either limit is reached, and nothing otherwise: the common case
   * costs the caller no promise.
   */
  afterStatement(params: readonly SqlValue[] = []): Promise<void> | undefined {
    return this.#count(boundBytes(params));
  }

  /** Counts a closed connection, whose native handle a finalizer frees too, like one statement. */
  afterClose(): Promise<void> | undefined {
    return this.#count(0);
  }

  /**
   * Counts what a call of a kept statement bound, and no statement: the
   * statement stays (a local connection's cache), but a large blob bound as
   * a copy still waits for V8 (see `toDriverParams`).
   */
  afterBinding(params: readonly SqlValue[]): Promise<void> | undefined {
    return this.#count(boundBytes(params), 0);
  }

  #count(bytes: number, statements = 1): Promise<void> | undefined {
    this.#statements += statements;
    this.#bytes += bytes;
    if (this.#statements < STATEMENTS_PER_TURN && this.#bytes < BYTES_PER_TURN) return undefined;
    this.#statements = 0;
    this.#bytes = 0;
    return new Promise<void>((resolve) => setImmediate(resolve));
  }
}

function boundBytes(params: readonly SqlValue[]): number {
  let bytes = 0;
  for (const value of params) {
    if (value instanceof Uint8Array) bytes += value.byteLength;
    else if (typeof value === "string") bytes += value.length;
  }
  return bytes;
}

/** The one count for every connection every libsqlDriver() makes. */
export const finalizerTurns = new FinalizerTurns();
