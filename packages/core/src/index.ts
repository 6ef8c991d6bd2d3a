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
export type { ForkPoint, ForkResult } from "./run/fork.js";
export type { JsonObject, JsonValue } from "./run/json.js";
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
export type { Content } from "./workspace/blobs.js";
export type { GarbageReport } from "./workspace/gc.js";
export { EMPTY_ROOT_ID, ROOT_FORMAT, rootId, treeId } from "./workspace/identity.js";
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
