/**
 * `@runledger/core/datastore`: the datastore (a documents database with a
 * format marker), the v2/v3 route its writes take, and the repositories that
 * write through it (docs/routing.md). On format 2 a write records a route-1
 * sync signal; on format 3 it also stages typed changes into a commit-log
 * unit bound to the datastore's hook, so the log and a read model follow it.
 *
 * @example
 * ```ts
 * import { nodeDriver } from "@runledger/adapter-node";
 * import { CommitLogStore } from "@runledger/core/commit-log";
 * import { DatastoreStore, WorkflowRunRepository, withRunUnit } from "@runledger/core/datastore";
 *
 * const driver = nodeDriver();
 * const datastores = new DatastoreStore({ driver });
 * const datastore = await datastores.open("data.db", { create: { format: 3 } });
 * const logs = new CommitLogStore({ driver });
 * const log = await logs.open("commits.db", { create: true });
 * const runs = new WorkflowRunRepository(datastore);
 * const run = { workflowId: "nightly", runId: "r1" };
 *
 * // The run's writes stage typed changes into one unit, decided by how the run ends.
 * const outcome = await withRunUnit(datastore.hook, await log.begin(), async () => {
 *   await runs.create(run, { status: "running" });
 *   await runs.update(run, { status: "completed" });
 *   return { status: "completed" as const };
 * });
 * console.log(outcome.decision); // "committed"
 * await datastore.release();
 * await log.release();
 * await Promise.all([datastores.close(), logs.close()]);
 * ```
 *
 * @module
 */

// The datastore and the repositories that write to it.

export {
  type BuilderName,
  CHANGE_BUILDERS,
  type ChangeBuilders,
  type RepositoryOptions,
} from "./repositories/builders.js";
export type { Datastore, DatastoreOptions } from "./repositories/datastore/datastore.js";
export type {
  DocumentEntry,
  DocumentReader,
  DocumentWriter,
} from "./repositories/datastore/documents.js";
export {
  DATASTORE_FORMAT_MAX,
  type FormatMarker,
  WRITTEN_BY as DATASTORE_WRITTEN_BY,
} from "./repositories/datastore/marker.js";
export {
  DATASTORE_APPLICATION_ID,
  DATASTORE_SCHEMA_V1,
  DATASTORE_SCHEMA_V1_DIGEST,
  DATASTORE_SCHEMA_VERSION,
} from "./repositories/datastore/schema-v1.js";
export {
  type DatastoreOpenOptions,
  DatastoreStore,
  type DatastoreStoreOptions,
} from "./repositories/datastore/store.js";
export {
  AutoDefinitionRepository,
  DefinitionRepository,
  EvaluatedDefinitionRepository,
} from "./repositories/definitions.js";
export {
  type DatastoreInitialize,
  DEFAULT_VAULT_CONFIG,
  DEFAULT_VAULT_NAME,
} from "./repositories/initialize.js";
export { splitDocumentPath } from "./repositories/layout.js";
export {
  type StoredVaultConfig,
  type VaultConfig,
  VaultConfigRepository,
  type VaultProvider,
} from "./repositories/vault-config.js";
export { VAULT_DIRECTORY_SETTINGS } from "./repositories/vault-paths.js";
export { WorkflowRunRepository } from "./repositories/workflow-runs.js";

// The v2/v3 route every repository write takes.

export type {
  ChangeHook,
  DatastoreFormat,
  PathChange,
  RouteObserver,
  RouteRecord,
} from "./routing/hook.js";
export {
  type BuiltChanges,
  bindUnit,
  signalChange,
  stageTyped,
  type TypedStager,
  typedStagingActive,
  withStagingScope,
} from "./routing/route.js";
export {
  COMMITTING_ENDINGS,
  type RunEnding,
  type RunUnit,
  type RunUnitOutcome,
  withRunUnit,
} from "./routing/run-unit.js";
