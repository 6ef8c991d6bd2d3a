/**
 * What the commit log and the read model ask of the database they run on,
 * stated in their own layer so that they never import the connection provider
 * (stores/ composes the two).
 */
import type { InjectedContext } from "../port/context.js";
import type { Executor } from "../port/driver.js";
import type { ReadScope, WriteScope } from "../transaction/scope.js";

/**
 * What the commit log and the read model need from whoever opened their
 * database: a way to run one write transaction or one read snapshot at a
 * time. A lease of the connection provider is exactly this: the commit log's
 * and read model's stores hand one in.
 */
export interface DatabaseAccess {
  /** The canonical location, for messages. */
  readonly location: string;
  transact<T>(fn: (tx: WriteScope) => Promise<T>): Promise<T>;
  read<T>(fn: (reader: ReadScope) => Promise<T>): Promise<T>;
}

/** Injected time and ids (txn ids, log ids). */
export type LogContext = InjectedContext;

/**
 * An establish hook for a database opened with `{ create: true }` or not at
 * all: the shape of the connection provider's hook, stated here so this
 * layer needs nothing from the provider.
 */
export type EstablishSteps = (steps: {
  /** The connection, as far as this layer needs it: whether it is a server's. */
  readonly connection?: { readonly remote?: boolean };
  readonly location: string;
  readonly create: true | undefined;
  configure(seen?: { readonly journalMode?: string }): Promise<void>;
  transact<T>(fn: (tx: WriteScope) => Promise<T>): Promise<T>;
  /** Reads outside any transaction, each statement its own snapshot. */
  read<T>(fn: (reader: Executor) => Promise<T>): Promise<T>;
}) => Promise<void>;
