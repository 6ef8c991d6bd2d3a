/**
 * The run API's entry: RunStore opens runs (creating, read-only, forking)
 * and RunLease runs transactions and snapshots on one.
 */

import type { Lease } from "../connection/lease.js";
import { openExisting } from "../connection/open-existing.js";
import { type ConnectionProviderOptions, PROVIDER_OPTIONS } from "../connection/provider.js";
import { ProviderStore } from "../connection/store-base.js";
import { injectedContext } from "../port/context.js";
import { RunledgerError } from "../port/errors.js";
import { portableHash } from "../port/hash.js";
import { checkNames } from "../port/options.js";
import { NodeCache } from "../workspace/objects.js";
import { rootPoint } from "../workspace/sources.js";
import { establishRun, identityMismatch, validateCreate } from "./establish.js";
import { type ForkPoint, type ForkResult, forkInto } from "./fork.js";
import type { RootHint } from "./journal.js";
import { RunSnapshot, RunTransaction } from "./scopes.js";
import type { RunContext, RunCreate } from "./types.js";
import { type VerifyProgress, type VerifyReport, verifyRun } from "./verify.js";

export interface RunStoreOptions extends Omit<ConnectionProviderOptions<RunCreate>, "establish"> {
  /** Milliseconds since the epoch for timestamps. Default Date.now. */
  readonly clock?: () => number;
  /** Event ids. Default: time-ordered UUIDs (version 7). */
  readonly newId?: () => string;
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
const STORE_OPTIONS = [...PROVIDER_OPTIONS, "clock", "newId"];

/**
 * The provider of run databases: one authoritative entry per canonical
 * location, each a version-1 run database recognized (or created) before the
 * first lease is handed out.
 */
export class RunStore extends ProviderStore<RunCreate> {
  readonly #context: RunContext;

  constructor(options: RunStoreOptions) {
    checkNames(options, STORE_OPTIONS, "RunStore's options");
    const context: RunContext = {
      ...injectedContext(options),
      workspace: { nodes: new NodeCache(), hash: options.driver.hash ?? portableHash },
    };
    super(options, establishRun(context));
    this.#context = context;
  }

  async open(location: string, options: RunOpenOptions = {}): Promise<RunLease> {
    checkNames(options, ["create", "readOnly"], "open's options");
    const { create } = options;
    if (create !== undefined) validateCreate(create);
    const lease = new RunLease(
      await openExisting(
        this.provider,
        location,
        options,
        "run",
        "{ create: { workflowId, runId } }",
      ),
      this.#context,
    );
    if (create !== undefined) await checkIdentity(lease, create);
    return lease;
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
      const targetLease = await this.open(target, { create: options.create });
      try {
        const result = await forkInto(
          sourceLease.lease,
          targetLease.lease,
          at,
          this.#context,
          this.#context.workspace.nodes,
        );
        return { ...result, lease: targetLease };
      } catch (error) {
        await targetLease.release();
        throw error;
      }
    } finally {
      await sourceLease.release();
    }
  }
}

/** A handle on one run. Release it (or `await using` it) when done. */
export class RunLease {
  readonly #lease: Lease;
  readonly #context: RunContext;
  /** The last event this lease saw appended: a guess SQLite checks on every use (see RootHint). */
  readonly #hint: RootHint = { root: undefined };

  /** @internal Run leases come from `RunStore.open`. */
  constructor(lease: Lease, context: RunContext) {
    this.#lease = lease;
    this.#context = context;
  }

  get location(): string {
    return this.#lease.location;
  }

  /** True for a lease from `open(location, { readOnly: true })`. */
  get readOnly(): boolean {
    return this.#lease.readOnly;
  }

  /**
   * The connection-level lease under this run (`Lease` of
   * `@runledger/core/engine`): statements on the run's own connection, for
   * tools and test suites that inspect its tables. What it writes bypasses
   * the run's rules; the journal, workspace and run row are the way to write.
   */
  get lease(): Lease {
    return this.#lease;
  }

  transact<T>(fn: (tx: RunTransaction) => Promise<T>): Promise<T> {
    return this.#lease.transact((scope) =>
      fn(new RunTransaction(scope, this.#context, this.#hint)),
    );
  }

  read<T>(fn: (r: RunSnapshot) => Promise<T>): Promise<T> {
    return this.#lease.read((scope) => fn(new RunSnapshot(scope, this.#context.workspace)));
  }

  /** The deep, O(data) check: integrity, every CHECK, gap-free journal and its digest chain, every object re-hashed, every reference. */
  verify(options: { progress?: VerifyProgress } = {}): Promise<VerifyReport> {
    try {
      checkNames(options, ["progress"], "verify's options");
    } catch (error) {
      return Promise.reject(error);
    }
    return this.#lease.read((scope) =>
      verifyRun(scope, this.#context.workspace.hash, options.progress),
    );
  }

  release(): Promise<void> {
    return this.#lease.release();
  }

  [Symbol.asyncDispose](): Promise<void> {
    return this.#lease.release();
  }
}

/** An entry already open was recognized for its first opener; a later `create` must name the same run. */
async function checkIdentity(lease: RunLease, create: RunCreate): Promise<void> {
  const run = await lease.read((r) => r.run.get());
  if (run.workflowId === create.workflowId && run.runId === create.runId) return;
  await lease.release();
  throw identityMismatch(lease.location, run, create);
}
