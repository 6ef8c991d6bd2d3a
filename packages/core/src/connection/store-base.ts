/**
 * The part every store shares (RunStore, CommitLogStore, ReadModelStore,
 * the datastore's): a provider built with its kind's establish hook, and the
 * provider's lifetime calls, written once.
 */
import { ConnectionProvider } from "./provider.js";
import type { EntrySummary } from "./provider-options.js";
import {
  type ConnectionProviderOptions,
  type Establish,
  type Initialize,
  providerOptionsOf,
} from "./provider-options.js";

/**
 * What every store of one database kind shares: a connection provider set
 * up with that kind's establish hook (and its initialize, for a kind whose
 * new databases a staging driver may build whole), and the provider's
 * lifetime calls.
 * Each store adds only its own `open`.
 */
export abstract class ProviderStore<Create> {
  protected readonly provider: ConnectionProvider<Create>;

  protected constructor(
    options: Omit<ConnectionProviderOptions<Create>, "establish" | "initialize">,
    establish: Establish<Create>,
    initialize?: Initialize<Create>,
  ) {
    // The provider takes its own options only; a store's own (clock, newId) stay with the store.
    this.provider = new ConnectionProvider<Create>({
      ...providerOptionsOf(options),
      establish,
      ...(initialize === undefined ? {} : { initialize }),
    });
  }

  /** Refuses new opens, lets started work finish, closes every database. */
  close(): Promise<void> {
    return this.provider.close();
  }

  get closed(): boolean {
    return this.provider.closed;
  }

  /** The databases open now, for inspection and tests. */
  get entries(): EntrySummary[] {
    return this.provider.entries;
  }
}
