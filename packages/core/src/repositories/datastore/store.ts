/**
 * The provider of datastores, shaped like the other stores: one
 * authoritative entry per canonical location, each datastore recognized
 * (or created) before the first handle is given out. A handle per open, so
 * each has its own hook (the route's identity) and namespace.
 */

import { openExisting } from "../../connection/open-existing.js";
import {
  type ConnectionProviderOptions,
  PROVIDER_OPTIONS,
} from "../../connection/provider-options.js";
import { ProviderStore } from "../../connection/store-base.js";
import { type InjectedContext, injectedContext } from "../../port/context.js";
import { RunledgerError } from "../../port/errors.js";
import { checkNames } from "../../port/options.js";
import type { DatastoreFormat } from "../../routing/hook.js";
import { checkInitialize, type DatastoreInitialize, initializeDatastore } from "../initialize.js";
import { Datastore, type DatastoreOptions } from "./datastore.js";
import { type DatastoreCreate, establishDatastore } from "./establish.js";

export interface DatastoreStoreOptions
  extends Omit<ConnectionProviderOptions<DatastoreCreate>, "establish" | "initialize"> {
  readonly clock?: () => number;
  readonly newId?: () => string;
}

export interface DatastoreOpenOptions extends DatastoreOptions {
  /** Create the datastore when the location holds none: `true` is format 2; `{ format: 3 }` opts in at creation. */
  readonly create?: boolean | { readonly format: DatastoreFormat };
  /**
   * Initialise the datastore: write its default vault config unless it has
   * one (docs/routing.md). `true` on format 2; format 3 commits it to a
   * commit log and needs `{ log }`.
   */
  readonly initialize?: boolean | DatastoreInitialize;
}

const NAMESPACE = /^[A-Za-z0-9._-]{1,128}$/;

export class DatastoreStore extends ProviderStore<DatastoreCreate> {
  readonly #context: InjectedContext;

  constructor(options: DatastoreStoreOptions) {
    checkNames(options, [...PROVIDER_OPTIONS, "clock", "newId"], "DatastoreStore's options");
    super(options, establishDatastore());
    this.#context = injectedContext(options);
  }

  async open(location: string, options: DatastoreOpenOptions = {}): Promise<Datastore> {
    checkNames(options, ["create", "initialize", "namespace", "observer"], "open's options");
    const namespace = options.namespace;
    if (namespace !== undefined && (!NAMESPACE.test(namespace) || /^\.+$/.test(namespace))) {
      throw new RunledgerError(
        "invalid_argument",
        "a namespace is 1 to 128 characters of A-Z a-z 0-9 . _ - (not only dots)",
        { details: { namespace } },
      );
    }
    const create =
      options.create === undefined || options.create === false
        ? undefined
        : {
            format: options.create === true ? (2 as const) : options.create.format,
            id: this.#context.newId(),
            now: this.#context.clock(),
          };
    const initialize =
      options.initialize === undefined || options.initialize === false
        ? undefined
        : options.initialize === true
          ? {}
          : options.initialize;
    // Asked to create a format-3 datastore: a missing log is refused before the file is made.
    if (initialize !== undefined && create?.format === 3) checkInitialize(3, initialize, location);
    const lease = await openExisting(
      this.provider,
      location,
      create === undefined ? {} : { create },
      "datastore",
      "{ create: true }",
    );
    try {
      const opened = await Datastore.formatAt(lease);
      const datastore = new Datastore(lease, opened, options, () => lease.release());
      // Asked for format 3 of a datastore that already existed: opt in, which
      // is refused unless it is still new and empty.
      if (create?.format === 3 && opened.format !== 3) await datastore.optIntoFormat3();
      if (initialize !== undefined) await initializeDatastore(datastore, initialize);
      return datastore;
    } catch (error) {
      await lease.release();
      throw error;
    }
  }
}
