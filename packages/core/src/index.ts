/**
 * `@runledger/core`: what an application calls. A run is one SQLite database
 * holding a journal of events, a content-addressed workspace and the run's
 * status; `RunStore` opens runs and hands out leases, a lease runs
 * transactions and snapshots, and every failure is a `RunledgerError` whose
 * `code` is one of `ERROR_CODES`. Pair it with an adapter for the driver.
 *
 * Other audiences have their own entries: `@runledger/core/commit-log`
 * (typed changes, the commit log, the read model), `@runledger/core/datastore`
 * (the datastore, the v2/v3 route, the repositories), `@runledger/core/engine`
 * (connection provider, scopes, schema manifests: for tool authors) and
 * `@runledger/core/port` (what an adapter implements). docs/api.md lists
 * every name of every entry.
 *
 * Runtime-agnostic: no `node:` module and no SQL driver is imported anywhere
 * below this file.
 *
 * @example
 * ```ts
 * import { nodeDriver } from "@runledger/adapter-node";
 * import { isRunledgerError, RunStore } from "@runledger/core";
 *
 * const store = new RunStore({ driver: nodeDriver() });
 * const lease = await store.open("order-42.db", {
 *   create: { workflowId: "orders", runId: "order-42" },
 * });
 * await lease.transact(async (tx) => {
 *   await tx.workspace.apply({ put: { "cart.json": "[]" } }, { event: { kind: "started" } });
 *   const { sequence } = await tx.journal.append({ kind: "paid" });
 *   await tx.run.stop({ status: "completed", reason: { event: sequence } });
 * });
 * const run = await lease.read((r) => r.run.get());
 * console.log(run.status); // "completed"
 * try {
 *   await lease.transact((tx) => tx.journal.append({ kind: "late" }));
 * } catch (error) {
 *   if (!isRunledgerError(error, "run_finished")) throw error;
 *   console.log(error.code); // "run_finished" (typed so: a terminal status is final)
 * }
 * await lease.release();
 * await store.close();
 * ```
 *
 * @module
 */

// The run store and what it hands out.

export type { Durability } from "./connection/provider-options.js";
export type { JsonObject, JsonValue } from "./port/json.js";
export type {
  ReconcileOptions,
  ReconcileReport,
  RunEntry,
  RunList,
  RunListOptions,
} from "./run/catalog/types.js";
export type { RunCounts } from "./run/counts.js";
export type { ForkPoint, ForkResult } from "./run/fork.js";
export type { JournalWriter } from "./run/journal.js";
export type {
  JournalListOptions,
  JournalReader,
  JournalStreamOptions,
} from "./run/journal-reader.js";
export type { RunLease } from "./run/lease.js";
export { PAUSED_STATUSES, TERMINAL_STATUSES } from "./run/lifecycle.js";
export type { RunRecordReader, RunRecordWriter } from "./run/run-row.js";
export type { RunSnapshot, RunTransaction } from "./run/scopes.js";
export { type RunOpenOptions, RunStore, type RunStoreOptions } from "./run/store.js";
export type { TransactOptions } from "./run/transaction-keys.js";
export type {
  AppendResult,
  JournalEvent,
  RunCreate,
  RunInfo,
  RunStatus,
  StopReason,
  StopStatus,
} from "./run/types.js";
export type { VerifyReport } from "./run/verify.js";

// The workspace a run carries.

export type { ApplyChanges, ApplyOptions } from "./workspace/apply.js";
export type { WorkspaceChange } from "./workspace/diff.js";
export type { Content } from "./workspace/files.js";
export type { GarbageReport } from "./workspace/gc.js";
export { MAX_DEPTH, MAX_PATH_BYTES, MAX_SEGMENT_BYTES, parsePath } from "./workspace/paths.js";
export type {
  AtRoot,
  WorkspaceEntry,
  WorkspaceFile,
  WorkspaceReader,
} from "./workspace/reader.js";
export type { ApplyResult, HistoryEntry } from "./workspace/root-journal.js";
export type { CopySource, PathExpectation, RootPoint } from "./workspace/sources.js";
export type { VerifyProgress } from "./workspace/verify.js";
export type { WorkspaceWriter } from "./workspace/writer.js";

// The run database's frozen format (docs/file-format.md).

export {
  APPLICATION_ID,
  RUN_SCHEMA_VERSION,
  SCHEMA_V1,
  SCHEMA_V1_DIGEST,
} from "./run/schema-v1.js";
export { EMPTY_ROOT_ID } from "./workspace/node-encoding.js";

// Errors (docs/errors.md).

export { ERROR_CODES, type RunledgerErrorCode } from "./port/codes.js";
export { isRunledgerError, RunledgerError } from "./port/errors.js";
