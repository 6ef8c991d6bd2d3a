/**
 * What a connection provider is given: its driver and settings, and the
 * establish hook through which a schema recognizes or creates its database
 * in an entry's first turn; and what a store built on the provider passes
 * through to it.
 */
import type { Driver, DriverConnection, Executor } from "../port/driver.js";
import type { WriteScope } from "../transaction/scope.js";

export type Durability = "normal" | "full";

/** What an establish hook may do in the entry's first turn, before any lease exists. */
export interface EstablishContext<Create> {
  readonly connection: DriverConnection;
  /** The canonical location. */
  readonly location: string;
  /** What the caller passed as `create`, or undefined when it asked only to open. */
  readonly create: Create | undefined;
  /**
   * The caller asked for a read-only open: the hook must not write (there is
   * no `create`, `transact` refuses and `configure` does nothing).
   */
  readonly readOnly: boolean;
  /**
   * Applies WAL and the durability setting (retried while another opener
   * holds the lock). Pass what recognition saw: a file already in the wanted
   * journal mode is not asked to switch again.
   */
  configure(seen?: { readonly journalMode?: string }): Promise<void>;
  transact<T>(fn: (tx: WriteScope) => Promise<T>): Promise<T>;
  /**
   * Reads on the connection as it is, outside any transaction: each
   * statement reads its own snapshot and takes no lock beyond its own run.
   * Recognition reads the whole schema in one statement, so opening a file
   * costs no BEGIN, ROLLBACK or query_only switch. Only core's own SELECTs
   * run here; a write is a bug (use `transact`).
   */
  read<T>(fn: (reader: Executor) => Promise<T>): Promise<T>;
}

/**
 * Runs once per entry, inside its first turn: where a schema recognizes or
 * creates its database. It must leave a refused file exactly as found, so it
 * is the hook, not the provider, that decides when `configure` may write.
 */
export type Establish<Create> = (context: EstablishContext<Create>) => Promise<void>;

/**
 * Writes a new database's schema and first rows: `shared`, then `each`, in
 * one transaction. With it, a driver that can stage (`Driver.stage`) builds a
 * database it is asked to create away from its location and places it there
 * whole; the establish hook then finds an existing database. Together they
 * must write exactly what the establish hook's creation in place writes.
 */
export interface Initialize<Create> {
  /**
   * What every new database of the kind holds alike (its schema, its fixed
   * rows), written first. Where the driver places copies
   * (`StagedDatabase.placeCopy`), a provider writes it once, into the staged
   * database it keeps as a template (staged-template.ts).
   */
  readonly shared: (tx: WriteScope) => Promise<void>;
  /** The rest of one database's creation, written after `shared`: what `create` makes its own. */
  readonly each: (tx: WriteScope, create: Create) => Promise<void>;
}

export interface ConnectionProviderOptions<Create> {
  readonly driver: Driver;
  /** How long a write waits for another process's lock before `busy`. Default 5000 ms. */
  readonly busyTimeoutMs?: number;
  /** "normal" (default): synchronous=NORMAL in WAL. "full": synchronous=FULL. */
  readonly durability?: Durability;
  /** Keep an entry open this long after its last lease goes. Default 0. */
  readonly idleRetentionMs?: number;
  /** The schema's hook; by default only `configure` runs. */
  readonly establish?: Establish<Create>;
  /** The schema's creation, for a driver that stages; without it every creation is in place. */
  readonly initialize?: Initialize<Create>;
}

export interface OpenRequest<Create> {
  /** Create the database when it does not exist, with what the schema needs to do so. */
  readonly create?: Create;
  /**
   * Open without any write: the driver's read-only open, no journal-mode or
   * pragma change, and leases that refuse `transact` (`read_only`). Read-only
   * and writable opens of one location are two entries, two connections.
   */
  readonly readOnly?: boolean;
}

/**
 * Every name of `ConnectionProviderOptions` but `establish` and `initialize`: what a store
 * built on the provider (RunStore, CommitLogStore, …) takes through to it.
 */
export const PROVIDER_OPTIONS = [
  "driver",
  "busyTimeoutMs",
  "durability",
  "idleRetentionMs",
] as const satisfies readonly (keyof ConnectionProviderOptions<unknown>)[];

/** The provider's own options out of a store's (which adds clock, newId, …): only those it knows. */
export function providerOptionsOf<Create>(
  options: Omit<ConnectionProviderOptions<Create>, "establish" | "initialize">,
): Omit<ConnectionProviderOptions<Create>, "establish" | "initialize"> {
  const picked: Record<string, unknown> = {};
  for (const name of PROVIDER_OPTIONS) {
    if (options[name] !== undefined) picked[name] = options[name];
  }
  return picked as unknown as Omit<ConnectionProviderOptions<Create>, "establish" | "initialize">;
}

export interface EntrySummary {
  readonly location: string;
  readonly state: string;
  readonly leases: number;
}
