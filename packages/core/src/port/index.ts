/**
 * `@runledger/core/port`: what an adapter implements and may import. Adapters
 * use this subpath and never the rest of core. A driver opens connections;
 * a connection executes statements and begins transactions; values round-trip
 * exactly; every driver failure becomes a `RunledgerError` through
 * `fromSqliteFailure`. The helpers below (the Node set-up, file paths,
 * read-only opens, a synchronous driver's transactions, failures, settings,
 * hashing, value normalization) are what two adapters would otherwise both
 * write (docs/writing-an-adapter.md).
 *
 * `RunledgerError`, `isRunledgerError` and `RunledgerErrorCode` are also
 * exported by `@runledger/core`: applications and adapters both need them,
 * and an adapter imports nothing but this subpath. They are the only names
 * two entries share.
 *
 * @example
 * ```ts
 * import { fromSqliteFailure, isRunledgerError } from "@runledger/core/port";
 *
 * // Inside an adapter's execute: the driver threw; translate it before rethrowing.
 * const driverError = Object.assign(new Error("FOREIGN KEY constraint failed"), {
 *   code: "SQLITE_CONSTRAINT_FOREIGNKEY",
 * });
 * const failure = fromSqliteFailure(driverError.code, "cannot insert", driverError);
 * if (isRunledgerError(failure, "constraint_foreign_key")) {
 *   console.log(failure.sqlitePrimaryCode); // "SQLITE_CONSTRAINT"
 * }
 * console.log(failure.cause === driverError); // true
 * ```
 *
 * @module
 */

export { toHex } from "./bytes.js";
export type { RunledgerErrorCode } from "./codes.js";
export { RunledgerDialect } from "./dialect.js";
export type {
  AsyncContext,
  BeginMode,
  ConnectionSettings,
  Driver,
  DriverConnection,
  DriverTransaction,
  Executor,
  OpenOptions,
  QueryResult,
  StagedDatabase,
  StageOptions,
} from "./driver.js";
export { driverFailure } from "./driver-failure.js";
export { fromSqliteFailure, isRunledgerError, primaryCodeOf, RunledgerError } from "./errors.js";
export {
  canonicalFilePath,
  checkFileOpenable,
  type FileSystemProbe,
  resolvePosix,
  type SyncFileSystem,
  splitPosix,
  syncProbe,
} from "./files.js";
export {
  createSha256,
  type HashFunctions,
  type NodeCrypto,
  nodeCryptoHash,
  portableHash,
  type RuntimeHash,
  runtimeHash,
  type Sha256Stream,
  sha256,
  sha256Hex,
} from "./hash.js";
export { timeOrderedId } from "./ids.js";
export { type DirectoryEntry, isSideFile, listDatabaseFiles } from "./list-databases.js";
export {
  type NodeFileSystem,
  type NodeModules,
  type NodeRuntime,
  nodeRuntime,
} from "./node-runtime.js";
export { checkNames } from "./options.js";
export {
  isWalHeader,
  planReadOnlyOpen,
  type ReadOnlyFacts,
  type ReadOnlyPlan,
  readOnlyUri,
} from "./read-only.js";
export { readOnlyFacts, type SyncFileReads } from "./read-only-facts.js";
export { databaseFiles, removeDatabaseFiles } from "./remove-files.js";
export { applySettings } from "./settings.js";
export {
  ABANDONED_STAGING_MS,
  finishStagedImage,
  isStagingFile,
  type PublishFileSystem,
  type PublishOptions,
  publishFile,
  removeAbandonedStaging,
  sqliteVersionNumber,
} from "./staged-file.js";
export { StatementCache } from "./statement-cache.js";
export {
  type SynchronousSession,
  SynchronousTransactions,
  settled,
} from "./synchronous-transaction.js";
export { utf8 } from "./text.js";
export { transactionActiveError, transactionClosedError } from "./transaction-refusals.js";
export {
  isSqlValue,
  normalizeInteger,
  normalizeRow,
  plainBytes,
  type Row,
  type SqlValue,
} from "./values.js";
