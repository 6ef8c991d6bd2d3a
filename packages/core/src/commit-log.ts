/**
 * `@runledger/core/commit-log`: typed changes, the commit log and the read
 * model (docs/commit-log.md). A typed change is an intent, the partition it
 * lands in and its `put`/`tombstone` ops with expectations; a commit-log
 * unit stages changes and commits one commit per partition per batch, run
 * partitions last, refusing a partition whose expectation fails; a read
 * model catches up from the log into documents and a catalog.
 *
 * @example
 * ```ts
 * import { nodeDriver } from "@runledger/adapter-node";
 * import { CommitLogStore, put, ReadModelStore, typedChange } from "@runledger/core/commit-log";
 *
 * const driver = nodeDriver();
 * const logs = new CommitLogStore({ driver });
 * const log = await logs.open("commits.db", { create: true });
 * const unit = await log.begin();
 * await unit.stage(
 *   typedChange("definition.create", { kind: "model", name: "alpha" }, [
 *     put("definition.yaml", "steps: []", { expect: "absent" }),
 *   ]),
 * );
 * const result = await unit.commit();
 * console.log(result.refused.length); // 0 (no expectation failed)
 *
 * const models = new ReadModelStore({ driver });
 * const model = await models.open("read-model.db", { create: true });
 * const caughtUp = await model.catchUp(log);
 * console.log(caughtUp.commits); // 1 (a second catch-up applies 0)
 * await model.release();
 * await log.release();
 * await Promise.all([logs.close(), models.close()]);
 * ```
 *
 * @module
 */

// Typed changes (pure values, no I/O).

export { changeBatches, MAX_COMMIT_OPS } from "./changes/batches.js";
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
// The commit log and the read model.

export type { DatabaseAccess } from "./commit-log/context.js";
export { type BeginOptions, type CommitLog, commitLogAccess } from "./commit-log/log.js";
export type {
  CatalogRow,
  CatchUpOptions,
  CatchUpResult,
  ReadModel,
  ReadModelReader,
} from "./commit-log/read-model.js";
export {
  READ_MODEL_APPLICATION_ID,
  READ_MODEL_SCHEMA_V1,
  READ_MODEL_SCHEMA_V1_DIGEST,
  READ_MODEL_SCHEMA_VERSION,
} from "./commit-log/read-model-schema-v1.js";
export type { LogReader } from "./commit-log/reader.js";
export {
  COMMIT_LOG_APPLICATION_ID,
  COMMIT_LOG_SCHEMA_V1,
  COMMIT_LOG_SCHEMA_V1_DIGEST,
  COMMIT_LOG_SCHEMA_VERSION,
} from "./commit-log/schema-v1.js";
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
} from "./commit-log/types.js";
export type { CommitUnit, UnitOptions, UnitState } from "./commit-log/unit.js";
// The stores that open them, shaped like RunStore.

export {
  CommitLogStore,
  type CommitLogStoreOptions,
  ReadModelStore,
  type ReadModelStoreOptions,
  type StoreOpenOptions,
} from "./stores/commit-log-store.js";
