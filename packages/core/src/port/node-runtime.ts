/**
 * What every adapter running on Node sets up alike, written once: its async
 * context, Node's native SHA-256, and the port's local-file helpers (the
 * canonical path, the checks before an open, the facts a read-only open
 * decides from, removal, listing) bound to Node's file calls. Core imports
 * no `node:` module, so the adapter hands its modules in; nothing here
 * depends on Node but the shapes it expects of them.
 */
import type { AsyncContext, OpenOptions } from "./driver.js";
import { canonicalFilePath, checkFileOpenable, syncProbe } from "./files.js";
import { type HashFunctions, type NodeCrypto, nodeCryptoHash } from "./hash.js";
import { type DirectoryEntry, listDatabaseFiles } from "./list-databases.js";
import type { ReadOnlyFacts } from "./read-only.js";
import { readOnlyFacts, type SyncFileReads } from "./read-only-facts.js";
import { removeDatabaseFiles } from "./remove-files.js";
import {
  type PublishFileSystem,
  type PublishOptions,
  publishFile,
  removeAbandonedStaging,
} from "./staged-file.js";

/** The calls of `node:fs` the set-up makes, named and shaped as `node:fs` has them. */
export interface NodeFileSystem extends SyncFileReads, PublishFileSystem {
  openSync(path: string, flags: "r" | "wx", mode?: number): number;
  existsSync(path: string): boolean;
  statSync(path: string): {
    readonly size: number;
    readonly mtimeMs: number;
    isDirectory(): boolean;
  };
  readonly constants: { readonly W_OK: number };
  accessSync(path: string, mode: number): void;
  readonly realpathSync: { native(path: string): string };
  readdirSync(path: string, options: { withFileTypes: true }): readonly DirectoryEntry[];
  rmSync(path: string, options: { force: true }): void;
}

/** Node's modules, as an adapter module hands them in. */
export interface NodeModules {
  /** `node:fs`. */
  readonly fs: NodeFileSystem;
  /** `AsyncLocalStorage` from `node:async_hooks`. */
  readonly AsyncLocalStorage: new () => AsyncContext;
  /** The working directory relative paths start from: `() => process.cwd()`. */
  readonly cwd: () => string;
  /** `node:crypto`; without it there is no `hash`, and core hashes with its portable SHA-256. */
  readonly crypto?: NodeCrypto;
}

/** What the set-up gives: `Driver` members as they are, and what `open` checks a file with. */
export interface NodeRuntime {
  /** For `Driver.asyncContext`. */
  readonly asyncContext: AsyncContext;
  /** For `Driver.hash`: `node:crypto`'s SHA-256, where the adapter handed `crypto` in. */
  readonly hash: HashFunctions | undefined;
  /** For `Driver.canonicalize` of a local path: `canonicalFilePath`. */
  canonicalize(path: string): Promise<string>;
  /** For `Driver.remove` of a local file: `removeDatabaseFiles`, side files first. */
  remove(path: string): Promise<void>;
  /** For `Driver.listDatabases` of a local directory: `listDatabaseFiles`. */
  listDatabases(directory: string): Promise<string[]>;
  /** `checkFileOpenable`: what an open refuses before the driver is called. */
  checkFileOpenable(path: string, request: Pick<OpenOptions, "create" | "readOnly">): Promise<void>;
  /** `readOnlyFacts`: the file's header and side files, read without writing anything. */
  readOnlyFacts(path: string): ReadOnlyFacts;
  /**
   * Whether anything (a file of any size, a directory, a link) is at `path`;
   * when there is, a staging file a killed creator left beside it is removed
   * (`removeAbandonedStaging`).
   */
  exists(path: string): boolean;
  /** For `StagedDatabase.publish`: `publishFile`, the image whole at `path` or nothing. */
  publish(path: string, image: Uint8Array, options?: PublishOptions): boolean;
}

/**
 * The Node set-up of an adapter module. Call it once, at the module's top
 * level: every driver the module makes then shares one async context (core
 * keys what it stores by connection entry, so drivers can share it, and
 * Node's cost per promise grows with the number of AsyncLocalStorage
 * instances in use).
 *
 * @example
 * // At the top of the adapter's module that makes its driver:
 * const node = nodeRuntime({ fs, crypto, AsyncLocalStorage, cwd: () => process.cwd() });
 */
export function nodeRuntime(modules: NodeModules): NodeRuntime {
  const { fs } = modules;
  const files = syncProbe({
    cwd: modules.cwd,
    realpath: (path) => fs.realpathSync.native(path),
    isDirectory: (path) => fs.statSync(path).isDirectory(),
    checkWritable: (path) => fs.accessSync(path, fs.constants.W_OK),
  });
  return {
    asyncContext: new modules.AsyncLocalStorage(),
    hash: modules.crypto === undefined ? undefined : nodeCryptoHash(modules.crypto),
    canonicalize: (path) => canonicalFilePath(path, files),
    async remove(path) {
      removeDatabaseFiles(path, (file) => fs.rmSync(file, { force: true }));
    },
    listDatabases: (directory) =>
      listDatabaseFiles(directory, (path) => fs.readdirSync(path, { withFileTypes: true }), files),
    checkFileOpenable: (path, request) => checkFileOpenable(path, request, files),
    readOnlyFacts: (path) => readOnlyFacts(path, fs),
    exists(path) {
      if (!fs.existsSync(path)) return false;
      removeAbandonedStaging(path, fs);
      return true;
    },
    publish: (path, image, options) => publishFile(path, image, fs, options),
  };
}
