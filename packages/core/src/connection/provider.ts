/**
 * The connection provider: one entry per canonical location, opened once,
 * established in its first turn, shared by leases and closed when idle. The
 * only place a driver connection is opened or closed.
 */

import type { AsyncContext, ConnectionSettings, Driver, StagedDatabase } from "../port/driver.js";
import { RunledgerError } from "../port/errors.js";
import { checkNames } from "../port/options.js";
import { retryWhileBusy } from "../transaction/busy.js";
import { runWriteTransaction } from "../transaction/owner.js";
import { Entry, entryKey } from "./entry.js";
import { Lease, type LeaseOwner } from "./lease.js";
import {
  type ConnectionProviderOptions,
  type EntrySummary,
  type Establish,
  type Initialize,
  type OpenRequest,
  PROVIDER_OPTIONS,
} from "./provider-options.js";
import { deleteDatabase, inUse, whileAlone } from "./remove.js";
import { type CopyingStagedDatabase, StagedTemplate } from "./staged-template.js";

/** How long one statement waits inside SQLite before core's own retry takes over. */
const DRIVER_BUSY_SLICE_MS = 100;

/**
 * The provider: at most one authoritative entry per canonical location.
 * Two spellings of one file reach the same entry; concurrent opens of one
 * location share one opening; a failed open leaves no entry behind.
 */
export class ConnectionProvider<Create = unknown> {
  readonly #driver: Driver;
  readonly #settings: ConnectionSettings;
  readonly #idleRetentionMs: number;
  readonly #establish: Establish<Create>;
  readonly #initialize: Initialize<Create> | undefined;
  readonly busyTimeoutMs: number;
  readonly #entries = new Map<string, Entry>();
  readonly #openings = new Map<string, Promise<Entry>>();
  readonly #closings = new Map<string, Promise<void>>();
  /** The staged database new databases are placed from, once a creation has staged one (staged-template.ts). */
  #template: StagedTemplate<Create> | undefined;
  #closed = false;
  /** What this provider's leases call back into: not part of the provider's own surface. */
  readonly #owner: LeaseOwner;

  constructor(options: ConnectionProviderOptions<Create>) {
    checkNames(options, [...PROVIDER_OPTIONS, "establish", "initialize"], "the provider's options");
    const provider = this;
    this.#owner = {
      get closed() {
        return provider.#closed;
      },
      get busyTimeoutMs() {
        return provider.busyTimeoutMs;
      },
      get asyncContext() {
        return provider.asyncContext;
      },
      releaseLease: (entry) => this.#releaseLease(entry),
      discardPoisoned: (entry) => this.#discardPoisoned(entry),
    };
    this.#driver = options.driver;
    this.busyTimeoutMs = options.busyTimeoutMs ?? 5000;
    this.#idleRetentionMs = options.idleRetentionMs ?? 0;
    this.#settings = { journalMode: "wal", synchronous: options.durability ?? "normal" };
    this.#establish = options.establish ?? ((context) => context.configure());
    this.#initialize = options.initialize;
  }

  get closed(): boolean {
    return this.#closed;
  }

  get driver(): Driver {
    return this.#driver;
  }

  get asyncContext(): AsyncContext | undefined {
    return this.#driver.asyncContext;
  }

  /** The entries open now, for inspection and tests. */
  get entries(): EntrySummary[] {
    return [...this.#entries.values()].map((entry) => ({
      location: entry.location,
      state: entry.state,
      leases: entry.leases,
    }));
  }

  async open(location: string, request: OpenRequest<Create> = {}): Promise<Lease> {
    this.#checkOpen();
    if (request.readOnly === true && request.create !== undefined) {
      throw new RunledgerError(
        "invalid_argument",
        "a read-only open never creates; pass either readOnly or create, not both",
      );
    }
    const canonical = await this.#driver.canonicalize(location);
    const key = entryKey(canonical, request.readOnly === true);
    for (;;) {
      this.#checkOpen();
      await this.#closings.get(key);
      const entry = this.#entries.get(key);
      if (entry !== undefined && entry.state === "ready") return this.#lease(entry);
      const opening = this.#openings.get(key);
      if (opening !== undefined) {
        // Share the opening in flight; if it failed without create and this
        // request may create, try again with create below.
        const shared = await opening.catch((error: unknown) => {
          if (request.create === undefined) throw error;
          return undefined;
        });
        if (shared !== undefined) return this.#lease(shared);
        continue;
      }
      if (entry !== undefined) {
        // Poisoned, closing or closed: it is on its way out; wait and look again.
        await this.#closings.get(key);
        if (this.#entries.get(key) === entry) this.#entries.delete(key);
        continue;
      }
      const started = this.#startOpening(canonical, key, request);
      return this.#lease(await started, true);
    }
  }

  /**
   * Deletes the database at `location`, once `open` (this provider's own
   * opening, so the file is recognized first: nothing that is not one of its
   * databases is ever deleted) has handed out the only lease of it. Refused
   * with `database_in_use`-style `run_in_use`, nothing deleted, while any
   * other lease of this provider holds the location, or any other connection
   * — another process's — has it open: switching the file out of WAL, which
   * SQLite allows only to a connection alone on it, is the test, and also
   * folds the log into the file and removes it. The driver then deletes the
   * files while core holds the write lock (`Driver.remove`). A database on a
   * server is deleted by the driver once this provider's connection to it is
   * closed; whether another client still uses it is the server's to know.
   */
  async remove(location: string, open: () => Promise<Lease>): Promise<void> {
    this.#checkOpen();
    const remove = this.#driver.remove?.bind(this.#driver);
    if (remove === undefined) {
      throw new RunledgerError(
        "remove_unsupported",
        `cannot remove ${location}: the ${this.#driver.name} driver cannot delete a database; delete it with the tools of where it lives`,
      );
    }
    const canonical = await this.#driver.canonicalize(location);
    if (this.#holds(canonical)) throw inUse(canonical, "a lease of this store holds it");
    let lease: Lease | undefined;
    await whileAlone(canonical, async () => {
      lease = await open();
    });
    const entry = this.#entries.get(entryKey(canonical, false));
    try {
      if (entry === undefined) throw inUse(canonical, "a lease of this store holds it");
      await entry.queue.run(async () => {
        if (entry.leases > 1 || this.#entries.has(entryKey(canonical, true))) {
          throw inUse(canonical, "a lease of this store holds it");
        }
        await deleteDatabase(entry, remove, this.busyTimeoutMs, () =>
          this.#entries.delete(entry.key),
        );
      });
    } finally {
      await lease?.release();
    }
  }

  /** Whether an entry of this location (writable or read-only) is open, opening or closing. */
  #holds(canonical: string): boolean {
    return [entryKey(canonical, false), entryKey(canonical, true)].some(
      (key) => this.#entries.has(key) || this.#openings.has(key) || this.#closings.has(key),
    );
  }

  /**
   * Refuses new opens, lets every operation already started or queued finish,
   * then closes every entry. A lease used afterwards fails with `provider_closed`.
   */
  async close(): Promise<void> {
    if (this.#closed) {
      await Promise.all(this.#closings.values());
      return;
    }
    this.#closed = true;
    await Promise.allSettled(this.#openings.values());
    await Promise.all([...this.#entries.values()].map((entry) => this.#closeEntry(entry)));
    await Promise.all(this.#closings.values());
    const template = this.#template;
    this.#template = undefined;
    await template?.close();
  }

  async #releaseLease(entry: Entry): Promise<void> {
    entry.leases--;
    if (entry.leases > 0 || entry.state !== "ready") return;
    if (this.#idleRetentionMs > 0 && !this.#closed) {
      const timer = setTimeout(() => {
        entry.cancelIdle = undefined;
        if (entry.leases === 0) void this.#closeEntry(entry);
      }, this.#idleRetentionMs);
      entry.cancelIdle = () => clearTimeout(timer);
      return;
    }
    await this.#closeEntry(entry);
  }

  async #discardPoisoned(entry: Entry): Promise<void> {
    if (this.#entries.get(entry.key) === entry) this.#entries.delete(entry.key);
    await entry.connection.close().catch(() => undefined);
  }

  #startOpening(canonical: string, key: string, request: OpenRequest<Create>): Promise<Entry> {
    const opening = this.#openEntry(canonical, request).finally(() => {
      this.#openings.delete(key);
    });
    this.#openings.set(key, opening);
    return opening;
  }

  async #openEntry(canonical: string, request: OpenRequest<Create>): Promise<Entry> {
    const readOnly = request.readOnly === true;
    if (request.create !== undefined) await this.#createWhole(canonical, request.create);
    const connection = await this.#driver.open(canonical, {
      create: request.create !== undefined,
      readOnly,
      busyTimeoutMs: Math.min(DRIVER_BUSY_SLICE_MS, this.busyTimeoutMs),
      busyDeadlineMs: this.busyTimeoutMs,
    });
    const entry = new Entry(canonical, connection, readOnly);
    try {
      await entry.queue.run(() =>
        this.#establish({
          connection,
          location: canonical,
          create: request.create,
          readOnly,
          configure: async (seen) => {
            // A read-only open changes nothing: not the journal mode, not a pragma.
            if (readOnly) return;
            await retryWhileBusy(
              () => connection.configure(this.#settingsFor(seen?.journalMode)),
              this.busyTimeoutMs,
              `cannot configure ${canonical}`,
            );
          },
          transact: (fn) => runWriteTransaction(entry, fn, this.busyTimeoutMs),
          // Recognition only reads, so it may run again: while another
          // process creates the file or switches it to WAL, a reader can
          // meet its exclusive lock (SQLITE_BUSY) even before a statement runs.
          read: (fn) =>
            retryWhileBusy(() => fn(connection), this.busyTimeoutMs, `cannot read ${canonical}`),
        }),
      );
    } catch (error) {
      await connection.close().catch(() => undefined);
      throw error;
    }
    if (this.#closed) {
      await connection.close();
      this.#checkOpen();
    }
    entry.state = "ready";
    this.#entries.set(entry.key, entry);
    return entry;
  }

  /**
   * Builds the database away from its location and places it there whole
   * (port/staged-file.ts), when the driver stages and the schema initializes:
   * the open that follows finds it as an existing database, recognized and
   * checked like any other. Nothing happens when something is at the location
   * already (the establish hook then creates in place), and a failure before
   * `publish` leaves nothing anywhere. Where the driver places copies, the
   * first staged database is kept as this provider's template and every
   * creation is placed from it (staged-template.ts).
   */
  async #createWhole(canonical: string, create: Create): Promise<void> {
    const initialize = this.#initialize;
    if (initialize === undefined || this.#driver.stage === undefined) return;
    // False from a placement: another creator placed its database first; the open checks what is there.
    const kept = this.#template;
    if (kept?.usable === true) {
      await kept.place(canonical, create);
      return;
    }
    const staged = await this.#driver.stage(canonical, {
      synchronous: this.#settings.synchronous ?? "normal",
    });
    if (staged === undefined) return;
    if (staged.placeCopy === undefined) {
      await this.#createOnce(canonical, staged, initialize, create);
      return;
    }
    const built = await StagedTemplate.build(
      staged as CopyingStagedDatabase,
      initialize,
      this.busyTimeoutMs,
    );
    // Two first creations at once each build one: the first kept serves every later creation.
    const template = this.#keep(built);
    try {
      await template.place(canonical, create);
    } finally {
      if (template !== this.#template) await template.close();
    }
  }

  /** A new template, kept unless a usable one was kept meanwhile or the provider is closing. */
  #keep(built: StagedTemplate<Create>): StagedTemplate<Create> {
    if (this.#closed || this.#template?.usable === true) return built;
    const replaced = this.#template;
    this.#template = built;
    // A poisoned template: closed once its creation in progress, if any, has finished.
    void replaced?.close().catch(() => undefined);
    return built;
  }

  /** A staged database that places no copies: built whole for one creation and published. */
  async #createOnce(
    canonical: string,
    staged: StagedDatabase,
    initialize: Initialize<Create>,
    create: Create,
  ): Promise<void> {
    try {
      await runWriteTransaction(
        new Entry(canonical, staged),
        async (tx) => {
          await initialize.shared(tx);
          await initialize.each(tx, create);
        },
        this.busyTimeoutMs,
      );
    } catch (error) {
      await staged.close().catch(() => undefined);
      throw error;
    }
    await staged.publish();
  }

  /** The settings to apply, without the journal mode when the file is already in it. */
  #settingsFor(journalMode: string | undefined): ConnectionSettings {
    if (journalMode !== this.#settings.journalMode) return this.#settings;
    return { synchronous: this.#settings.synchronous };
  }

  #lease(entry: Entry, established = false): Lease {
    entry.cancelIdle?.();
    entry.cancelIdle = undefined;
    entry.leases++;
    return new Lease(entry, this.#owner, established);
  }

  #closeEntry(entry: Entry): Promise<void> {
    const pending = this.#closings.get(entry.key);
    if (pending !== undefined && entry.state === "closing") return pending;
    entry.cancelIdle?.();
    entry.state = "closing";
    const closing = (async () => {
      try {
        await entry.queue.drained();
        await entry.connection.close();
      } finally {
        entry.state = "closed";
        if (this.#entries.get(entry.key) === entry) this.#entries.delete(entry.key);
        this.#closings.delete(entry.key);
      }
    })();
    this.#closings.set(entry.key, closing);
    return closing;
  }

  #checkOpen(): void {
    if (this.#closed) {
      throw new RunledgerError(
        "provider_closed",
        "this store is closed and opens nothing more; create a new store",
      );
    }
  }
}
