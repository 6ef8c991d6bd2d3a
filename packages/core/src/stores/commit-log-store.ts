/**
 * The providers of commit logs and read models, shaped like RunStore: one
 * authoritative entry per canonical location, each database recognized (or
 * created, with `{ create: true }`) before the first handle is given out.
 * They live above commit-log/ because they compose it with the connection
 * provider; commit-log/ itself only needs a DatabaseAccess.
 */

import type { LogContext } from "../commit-log/context.js";
import { establishCommitLog, establishReadModel } from "../commit-log/establish.js";
import { CommitLog } from "../commit-log/log.js";
import { ReadModel } from "../commit-log/read-model.js";
import { LogReader } from "../commit-log/reader.js";
import { openExisting } from "../connection/open-existing.js";
import {
  type ConnectionProviderOptions,
  PROVIDER_OPTIONS,
} from "../connection/provider-options.js";
import { ProviderStore } from "../connection/store-base.js";
import { injectedContext } from "../port/context.js";
import { checkNames } from "../port/options.js";

export interface CommitLogStoreOptions
  extends Omit<ConnectionProviderOptions<true>, "establish" | "initialize"> {
  /** Milliseconds since the epoch for timestamps. Default Date.now. */
  readonly clock?: () => number;
  /** Txn ids and log ids. Default: time-ordered UUIDs (version 7). */
  readonly newId?: () => string;
}

export interface StoreOpenOptions {
  /** Create the database when the location holds none yet. */
  readonly create?: boolean;
}

export class CommitLogStore extends ProviderStore<true> {
  readonly #context: LogContext;

  constructor(options: CommitLogStoreOptions) {
    checkNames(options, [...PROVIDER_OPTIONS, "clock", "newId"], "CommitLogStore's options");
    const context = injectedContext(options);
    super(options, establishCommitLog(context));
    this.#context = context;
  }

  async open(location: string, options: StoreOpenOptions = {}): Promise<CommitLog> {
    checkNames(options, ["create"], "open's options");
    const lease = await openExisting(
      this.provider,
      location,
      options.create === true ? { create: true } : {},
      "commit log",
      "{ create: true }",
    );
    try {
      const { logId } = await lease.read((scope) => new LogReader(scope).info());
      return new CommitLog(lease, this.#context, logId, () => lease.release());
    } catch (error) {
      await lease.release();
      throw error;
    }
  }
}

export type ReadModelStoreOptions = Omit<
  ConnectionProviderOptions<true>,
  "establish" | "initialize"
>;

export class ReadModelStore extends ProviderStore<true> {
  constructor(options: ReadModelStoreOptions) {
    checkNames(options, PROVIDER_OPTIONS, "ReadModelStore's options");
    super(options, establishReadModel());
  }

  async open(location: string, options: StoreOpenOptions = {}): Promise<ReadModel> {
    checkNames(options, ["create"], "open's options");
    const lease = await openExisting(
      this.provider,
      location,
      options.create === true ? { create: true } : {},
      "read model",
      "{ create: true }",
    );
    return new ReadModel(lease, () => lease.release());
  }
}
