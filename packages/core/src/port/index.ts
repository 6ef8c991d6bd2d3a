/**
 * The port surface: what an adapter implements and may import. Adapters use
 * this subpath (`@runledger/core/port`) and never the rest of core.
 */

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
} from "./driver.js";
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
  portableHash,
  type RuntimeHash,
  runtimeHash,
  type Sha256Stream,
  sha256,
  sha256Hex,
  toHex,
  utf8,
} from "./hash.js";
export { timeOrderedId } from "./ids.js";
export {
  isWalHeader,
  planReadOnlyOpen,
  type ReadOnlyFacts,
  type ReadOnlyPlan,
  readOnlyUri,
} from "./read-only.js";
export { readOnlyFacts, type SyncFileReads } from "./read-only-facts.js";
export { applySettings } from "./settings.js";
export { isSqlValue, normalizeInteger, plainBytes, type Row, type SqlValue } from "./values.js";
