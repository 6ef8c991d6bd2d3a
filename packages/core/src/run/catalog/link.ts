/**
 * A store's link to its catalog: the catalog database opened once, when
 * first needed, on a provider of its own (same driver and settings as the
 * runs), and the notes a store takes of the runs it touches.
 *
 * A note is written after the run's own commit, in a second database, so
 * it can be lost (a kill, a full disk, a busy catalog) while the run's work
 * stands. A failed note therefore never fails the run operation that made
 * it: the location is remembered as stale and noted again before the next
 * listing, and any row a lost note left behind is repaired by the next open
 * of that run or by `reconcile`. A listing that still cannot reach the
 * catalog fails with the catalog's own error.
 */

import type { Lease } from "../../connection/lease.js";
import { ConnectionProvider } from "../../connection/provider.js";
import type { ConnectionProviderOptions } from "../../connection/provider-options.js";
import type { InjectedContext } from "../../port/context.js";
import { RunCatalog } from "./catalog.js";
import { establishCatalog } from "./establish.js";
import type { RunEntry } from "./types.js";

export class CatalogLink {
  readonly #provider: ConnectionProvider<true>;
  readonly #location: string;
  #opening: Promise<{ lease: Lease; catalog: RunCatalog }> | undefined;
  /** Runs whose last note failed: noted again before the next listing. */
  readonly stale = new Set<string>();

  constructor(
    location: string,
    options: Omit<ConnectionProviderOptions<true>, "establish" | "initialize">,
    context: InjectedContext,
  ) {
    this.#location = location;
    this.#provider = new ConnectionProvider<true>({
      ...options,
      establish: establishCatalog(context),
    });
  }

  /** The catalog, opened (and created when absent) on first use. A failed open is tried again next time. */
  async catalog(): Promise<RunCatalog> {
    this.#opening ??= this.#provider
      .open(this.#location, { create: true })
      .then((lease) => ({ lease, catalog: new RunCatalog(lease) }));
    try {
      return (await this.#opening).catalog;
    } catch (error) {
      this.#opening = undefined;
      throw error;
    }
  }

  /** Records what `read` answers for a run; a failure marks the run stale instead of throwing. */
  async note(location: string, read: () => Promise<RunEntry>): Promise<void> {
    try {
      await (await this.catalog()).record(await read());
      this.stale.delete(location);
    } catch {
      this.stale.add(location);
    }
  }

  /** Deletes a removed run's row; a failure marks it stale (the next listing finds it gone). */
  async forget(location: string): Promise<void> {
    try {
      await (await this.catalog()).forget(location);
      this.stale.delete(location);
    } catch {
      this.stale.add(location);
    }
  }

  async close(): Promise<void> {
    const opening = this.#opening;
    this.#opening = undefined;
    if (opening !== undefined) {
      await opening.then(
        ({ lease }) => lease.release(),
        () => undefined,
      );
    }
    await this.#provider.close();
  }
}
