/**
 * The run API's entry: RunStore opens runs (creating, read-only, forking),
 * removes them and lists them through its catalog; the lease it hands out
 * on a run is ./lease.ts.
 */

import { openExisting } from "../connection/open-existing.js";
import {
  type ConnectionProviderOptions,
  PROVIDER_OPTIONS,
  providerOptionsOf,
} from "../connection/provider-options.js";
import { ProviderStore } from "../connection/store-base.js";
import { injectedContext } from "../port/context.js";
import { RunledgerError } from "../port/errors.js";
import { portableHash } from "../port/hash.js";
import { checkNames } from "../port/options.js";
import { NodeCache } from "../workspace/node-cache.js";
import { rootPoint } from "../workspace/sources.js";
import type { RunCatalog } from "./catalog/catalog.js";
import { CatalogLink } from "./catalog/link.js";
import { listQuery } from "./catalog/list-options.js";
import { meansNoRun, reconcileCatalog } from "./catalog/reconcile.js";
import type {
  ReconcileOptions,
  ReconcileReport,
  RunEntry,
  RunList,
  RunListOptions,
} from "./catalog/types.js";
import { readEntry } from "./entry.js";
import { establishRun, identityMismatch, initializeRun, validateCreate } from "./establish.js";
import { type ForkPoint, type ForkResult, forkInto } from "./fork.js";
import { JOURNAL_ROOTS } from "./journal-roots.js";
import { RunLease } from "./lease.js";
import type { RunContext, RunCreate } from "./types.js";

/** What `new RunStore(options)` takes: the provider's options, the injected clock and ids, a catalog. */
export interface RunStoreOptions
  extends Omit<ConnectionProviderOptions<RunCreate>, "establish" | "initialize"> {
  /** Milliseconds since the epoch for timestamps. Default Date.now. */
  readonly clock?: () => number;
  /** Event ids. Default: time-ordered UUIDs (version 7). */
  readonly newId?: () => string;
  /**
   * The location of a run catalog (a file, or a libSQL URL, for the same
   * driver): a small database listing the runs this store creates, opens,
   * stops, resumes and removes, for `list`. Created when absent.
   */
  readonly catalog?: string;
}

export interface RunOpenOptions {
  /** Create the run when the location holds none yet. An existing run must match it. */
  readonly create?: RunCreate;
  /**
   * Open an existing run without writing anything to it: no journal-mode
   * switch, no pragma write, no side file created where none existed.
   * `transact` on the lease is refused (`read_only`); a missing run is
   * `not_found`, never created. Not with `create`.
   */
  readonly readOnly?: boolean;
}

/** Every name RunStore's options may carry. */
const STORE_OPTIONS = [...PROVIDER_OPTIONS, "clock", "newId", "catalog"];

/**
 * The provider of run databases: one authoritative entry per canonical
 * location, each a version-1 run database recognized (or created) before the
 * first lease is handed out.
 */
export class RunStore extends ProviderStore<RunCreate> {
  /** The location of the store's run catalog, as given; undefined for a store made without one. */
  readonly catalog: string | undefined;
  readonly #context: RunContext;
  readonly #catalog: CatalogLink | undefined;

  constructor(options: RunStoreOptions) {
    checkNames(options, STORE_OPTIONS, "RunStore's options");
    const { catalog } = options;
    if (catalog !== undefined && (typeof catalog !== "string" || catalog.length === 0)) {
      throw new RunledgerError(
        "invalid_argument",
        `RunStore's catalog is a location (a file path or a libSQL URL); got ${JSON.stringify(catalog)}`,
      );
    }
    const context: RunContext = {
      ...injectedContext(options),
      workspace: {
        nodes: new NodeCache(),
        hash: options.driver.hash ?? portableHash,
        journal: JOURNAL_ROOTS,
      },
    };
    super(options, establishRun(context), initializeRun(context));
    this.catalog = catalog;
    this.#context = context;
    this.#catalog =
      catalog === undefined
        ? undefined
        : new CatalogLink(catalog, providerOptionsOf(options), context);
  }

  async open(location: string, options: RunOpenOptions = {}): Promise<RunLease> {
    checkNames(options, ["create", "readOnly"], "open's options");
    const { create } = options;
    if (create !== undefined) validateCreate(create);
    let lease: RunLease;
    try {
      lease = await this.#open(location, options);
    } catch (error) {
      // A run that is gone has no row: a removal the catalog did not hear of is mended here.
      if (this.#catalog !== undefined && meansNoRun(error)) {
        await this.#catalog.forget(await this.provider.driver.canonicalize(location));
      }
      throw error;
    }
    // The establish hook checked the identity for the open that ran it; any other checks here.
    if (create !== undefined && !lease.lease.established) await checkIdentity(lease, create);
    // Every open reconciles the run's row: whatever a lost note left, this mends.
    await this.#note(lease);
    return lease;
  }

  #open(location: string, options: RunOpenOptions): Promise<RunLease> {
    return openExisting(
      this.provider,
      location,
      options,
      "run",
      "{ create: { workflowId, runId } }",
    ).then(
      (lease) =>
        // The lease notes the catalog after a stop or resume commits, and before it is released.
        new RunLease(lease, this.#context, this.#catalog && ((run) => this.#note(run))),
    );
  }

  /** A run's entry as the catalog lists it, read through a read-only lease released at once. */
  async #entryOf(location: string): Promise<RunEntry> {
    const lease = await this.#open(location, { readOnly: true });
    try {
      return await lease.read((r) => readEntry(lease.location, r));
    } finally {
      await lease.release();
    }
  }

  async #note(lease: RunLease): Promise<void> {
    await this.#catalog?.note(lease.location, () =>
      lease.read((r) => readEntry(lease.location, r)),
    );
  }

  /**
   * One page of the runs the catalog lists, newest first (by creation time,
   * then location): `{ runs, next }`, `next` being the `after` of the page
   * that follows. Filters: `workflowId`, `status` (one or several),
   * `createdAfter`, `updatedAfter` (ms, exclusive). Needs a store made with
   * `catalog`. Runs whose last note failed are noted again first, so a
   * listing shows what this store did; one that cannot reach the catalog
   * fails with the catalog's error.
   */
  async list(options: RunListOptions = {}): Promise<RunList> {
    const open = this.#requireCatalog("list");
    // Checked before the catalog is opened, or created: bad input writes nothing.
    const query = listQuery(options);
    const catalog = await open();
    await this.#retryStale();
    return catalog.list(query);
  }

  /**
   * Rebuilds the catalog from the runs: each row it lists is checked against
   * its run (rewritten when they differ, deleted when the run is gone), and
   * with `directory`, every run file found there that the catalog lacks is
   * added. Runs are only read. Answers what changed.
   */
  async reconcile(options: ReconcileOptions = {}): Promise<ReconcileReport> {
    checkNames(options, ["directory"], "reconcile's options");
    const { directory } = options;
    if (directory !== undefined && (typeof directory !== "string" || directory.length === 0)) {
      throw new RunledgerError(
        "invalid_argument",
        `reconcile's directory is a path; got ${JSON.stringify(directory)}`,
      );
    }
    const catalog = await this.#requireCatalog("reconcile")();
    const report = await reconcileCatalog(
      catalog,
      {
        entryOf: (location) => this.#entryOf(location),
        candidates: (at) => this.#candidates(at),
      },
      directory,
    );
    this.#catalog?.stale.clear();
    return report;
  }

  #requireCatalog(what: string): () => Promise<RunCatalog> {
    const link = this.#catalog;
    if (link === undefined) {
      throw new RunledgerError(
        "catalog_missing",
        `cannot ${what} runs: this store has no catalog; make it with new RunStore({ driver, catalog: "<location>" })`,
      );
    }
    return () => link.catalog();
  }

  async #candidates(directory: string): Promise<string[]> {
    const { driver } = this.provider;
    if (driver.listDatabases === undefined) {
      throw new RunledgerError(
        "listing_unsupported",
        `cannot look for runs in ${directory}: the ${driver.name} driver cannot list ` +
          "databases there; call reconcile() without directory to check the catalog's own rows",
      );
    }
    return driver.listDatabases(directory);
  }

  async #retryStale(): Promise<void> {
    const link = this.#catalog;
    if (link === undefined || link.stale.size === 0) return;
    const catalog = await link.catalog();
    for (const location of [...link.stale]) {
      try {
        await catalog.record(await this.#entryOf(location));
      } catch (error) {
        if (!meansNoRun(error)) throw error;
        await catalog.forget(location);
      }
      link.stale.delete(location);
    }
  }

  override async close(): Promise<void> {
    await super.close();
    await this.#catalog?.close();
  }

  /**
   * Deletes the run at `location`: its file and side files (a local run) or
   * its namespace (a libSQL server with `adminUrl`). Only a recognized run is
   * deleted (another program's file is refused as on open), and only while
   * nothing else holds it: `run_in_use` while a lease of this store, or any
   * connection of another process, has it open; `not_found` when there is no
   * run. A kill at any point leaves the run intact or gone, never half.
   */
  async remove(location: string): Promise<void> {
    await this.provider.remove(location, () =>
      openExisting(this.provider, location, {}, "run", "{ create: { workflowId, runId } }"),
    );
    await this.#catalog?.forget(await this.provider.driver.canonicalize(location));
  }

  /**
   * Creates a new run at `target` whose workspace starts from one root of the
   * run at `source` (its current root, a root id, or the root a journal
   * event recorded). Only the objects that root reaches are copied.
   */
  async fork(
    source: string,
    target: string,
    options: { create: RunCreate; at?: ForkPoint },
  ): Promise<ForkResult & { lease: RunLease }> {
    checkNames(options, ["create", "at"], "fork's options");
    // One shape, checked as a copy's `at` is: { root: <64 hex> } or { sequence: <n ≥ 1> }.
    const at = rootPoint(options.at, "fork's options");
    const [from, to] = await Promise.all([
      this.provider.driver.canonicalize(source),
      this.provider.driver.canonicalize(target),
    ]);
    if (from === to) {
      throw new RunledgerError("invalid_argument", "a fork needs a target other than its source");
    }
    // The source is only read: a fork never writes to it.
    const sourceLease = await this.open(source, { readOnly: true });
    try {
      let targetLease: RunLease | undefined;
      const openTarget = async () => {
        targetLease = await this.open(target, { create: options.create });
        return targetLease.lease;
      };
      try {
        const result = await forkInto(sourceLease.lease, openTarget, at, this.#context);
        return { ...result, lease: targetLease! };
      } catch (error) {
        await targetLease?.release();
        throw error;
      }
    } finally {
      await sourceLease.release();
    }
  }
}

/** An entry already open, or opening, was recognized for another opener; this `create` must name the same run. */
async function checkIdentity(lease: RunLease, create: RunCreate): Promise<void> {
  const run = await lease.read((r) => r.run.get());
  if (run.workflowId === create.workflowId && run.runId === create.runId) return;
  await lease.release();
  throw identityMismatch(lease.location, run, create);
}
