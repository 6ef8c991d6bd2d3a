/**
 * A lease runs one operation at a time and refuses a second one started
 * while the first runs. The commit log and the read model are used
 * concurrently (several units, a catch-up reading while another writes), so
 * their stores hand them this: the lease's operations, queued in call order.
 * (The entry's own queue still orders them against every other lease.)
 */

import type { DatabaseAccess } from "../commitlog/context.js";
import type { Lease } from "../connection/lease.js";
import { TurnQueue } from "../connection/queue.js";
import type { ReadScope, WriteScope } from "../transaction/scope.js";

export class SerialAccess implements DatabaseAccess {
  readonly #lease: Lease;
  readonly #queue = new TurnQueue();

  constructor(lease: Lease) {
    this.#lease = lease;
  }

  get location(): string {
    return this.#lease.location;
  }

  transact<T>(fn: (tx: WriteScope) => Promise<T>): Promise<T> {
    return this.#queue.run(() => this.#lease.transact(fn));
  }

  read<T>(fn: (reader: ReadScope) => Promise<T>): Promise<T> {
    return this.#queue.run(() => this.#lease.read(fn));
  }

  /** Releases the lease once everything queued has run. */
  async release(): Promise<void> {
    await this.#queue.drained().catch(() => undefined);
    await this.#lease.release();
  }
}
