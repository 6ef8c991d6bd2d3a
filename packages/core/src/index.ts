/**
 * @runledger/core — the public face. Runtime-agnostic: no `node:` module and
 * no SQL driver is imported anywhere below this file.
 */

export { Lease } from "./connection/lease.js";
export {
  ConnectionProvider,
  type ConnectionProviderOptions,
  type Durability,
  type EntrySummary,
  type Establish,
  type EstablishContext,
  type OpenRequest,
} from "./connection/provider.js";
export * from "./port/index.js";
export type { RunCounts } from "./run/counts.js";
export type { ForkPoint, ForkResult } from "./run/fork.js";
export type { JsonObject, JsonValue } from "./run/json.js";
export { PAUSED_STATUSES, TERMINAL_STATUSES } from "./run/lifecycle.js";
export {
  APPLICATION_ID,
  CHUNK_SIZE,
  RUN_SCHEMA_VERSION,
  SCHEMA_V1,
  SCHEMA_V1_DIGEST,
} from "./run/schema-v1.js";
export { RunSnapshot, RunTransaction } from "./run/scopes.js";
export { RunLease, type RunOpenOptions, RunStore, type RunStoreOptions } from "./run/store.js";
export type {
  AppendResult,
  JournalEvent,
  RunCreate,
  RunInfo,
  RunStatus,
  StopReason,
  StopStatus,
} from "./run/types.js";
export type { VerifyProgress, VerifyReport } from "./run/verify.js";
export {
  manifestDigest,
  type SchemaManifest,
  type SchemaObject,
  serializeSchema,
} from "./schema/manifest.js";
export {
  compareObjects,
  type LiveSchema,
  readLiveSchema,
  type SchemaDifference,
} from "./schema/recognize.js";
export type { ReadScope, WriteScope } from "./transaction/scope.js";
export type { Content } from "./workspace/files.js";
export type { GarbageReport } from "./workspace/gc.js";
export { CUT_ONE_IN, EMPTY_ROOT_ID, MAX_NODE_ENTRIES } from "./workspace/node.js";
export { MAX_DEPTH, MAX_PATH_BYTES, MAX_SEGMENT_BYTES, parsePath } from "./workspace/paths.js";
export {
  type ApplyChanges,
  type ApplyResult,
  type AtRoot,
  type HistoryEntry,
  type WorkspaceEntry,
  type WorkspaceFile,
  WorkspaceReader,
  WorkspaceWriter,
} from "./workspace/workspace.js";

// Typed changes, the commit log and the read model (docs/commit-log.md).

export { changeBatches, MAX_COMMIT_OPS, splitIntoBatches } from "./changes/batches.js";
export {
  type ConfigTarget,
  checkChange,
  type DefinitionTarget,
  type ModelTarget,
  type RunTarget,
  renameDefinition,
  type TargetOf,
  type TypedChange,
  typedChange,
} from "./changes/change.js";
export {
  type AutoDefinitionIntent,
  CONFIG_KINDS,
  type ConfigIntent,
  type ConfigKind,
  INTENTS,
  type Intent,
  type IntentHome,
  intentHome,
  isIntent,
  isRunIntent,
  type ModelIntent,
  type RunIntent,
} from "./changes/intents.js";
export type { InvalidChangeReason } from "./changes/invalid.js";
export {
  type ChangeOp,
  type Expectation,
  MAX_KEY_LENGTH,
  type PutOp,
  put,
  type TombstoneOp,
  tombstone,
} from "./changes/ops.js";
export {
  configPartition,
  definitionPartition,
  isRunPartition,
  MAX_COMPONENT_LENGTH,
  type PartitionOf,
  parsePartition,
  partitionName,
  runPartition,
} from "./changes/partitions.js";
export type { DatabaseAccess, LogContext } from "./commitlog/context.js";
export { type BeginOptions, CommitLog } from "./commitlog/log.js";
export {
  type CatalogRow,
  type CatchUpOptions,
  type CatchUpResult,
  ReadModel,
  ReadModelReader,
} from "./commitlog/read-model.js";
export {
  READ_MODEL_APPLICATION_ID,
  READ_MODEL_SCHEMA_V1,
  READ_MODEL_SCHEMA_V1_DIGEST,
  READ_MODEL_SCHEMA_VERSION,
} from "./commitlog/read-model-schema-v1.js";
export { LogReader } from "./commitlog/reader.js";
export {
  COMMIT_LOG_APPLICATION_ID,
  COMMIT_LOG_SCHEMA_V1,
  COMMIT_LOG_SCHEMA_V1_DIGEST,
  COMMIT_LOG_SCHEMA_VERSION,
} from "./commitlog/schema-v1.js";
export type {
  AbandonResult,
  ChunkCheck,
  CommitResult,
  CommittedPartition,
  ContentSource,
  DocumentReconciler,
  ExpectationFailure,
  LandedVersion,
  LiveKey,
  LogCommit,
  LogOp,
  PendingUnit,
  ReconciledKey,
  RefusalReason,
  RefusedPartition,
  StagedOp,
  StagingScope,
} from "./commitlog/types.js";
export { CommitUnit, type UnitOptions, type UnitState } from "./commitlog/unit.js";
export {
  CommitLogStore,
  type CommitLogStoreOptions,
  ReadModelStore,
  type ReadModelStoreOptions,
  type StoreOpenOptions,
} from "./stores/commit-log-store.js";

// The datastore, the v2/v3 route and the repositories (docs/routing.md).

export {
  type BuilderName,
  CHANGE_BUILDERS,
  type ChangeBuilders,
  type RepositoryOptions,
} from "./repositories/builders.js";
export {
  Datastore,
  type DatastoreOptions,
  type DocumentEntry,
  DocumentReader,
  DocumentWriter,
} from "./repositories/datastore/datastore.js";
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
export { splitDocumentPath } from "./repositories/layout.js";
export {
  type StoredVaultConfig,
  type VaultConfig,
  VaultConfigRepository,
  type VaultProvider,
} from "./repositories/vault-config.js";
export { WorkflowRunRepository } from "./repositories/workflow-runs.js";
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
