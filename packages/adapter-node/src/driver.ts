import { AsyncLocalStorage } from "node:async_hooks";
import crypto from "node:crypto";
import {
  accessSync,
  closeSync,
  constants,
  openSync,
  readdirSync,
  readSync,
  realpathSync,
  rmSync,
  statSync,
} from "node:fs";
import {
  canonicalFilePath,
  checkFileOpenable,
  checkNames,
  type Driver,
  type DriverConnection,
  listDatabaseFiles,
  nodeCryptoHash,
  type OpenOptions,
  planReadOnlyOpen,
  RunledgerError,
  readOnlyFacts,
  readOnlyUri,
  removeDatabaseFiles,
  syncProbe,
} from "@runledger/core/port";
import Database from "better-sqlite3";
import { NodeConnection } from "./connection.js";
import { translate } from "./errors.js";

// better-sqlite3 reads URI filenames only when SQLITE_USE_URI=1 is set before
// its native addon loads (on the first `new Database`). A read-only open
// needs one for `immutable=1` (see @runledger/core's port/read-only.ts). Every
// location this driver opens otherwise is an absolute path, never a `file:` string.
process.env.SQLITE_USE_URI ??= "1";

export interface NodeDriverOptions {
  /** Prepared statements kept per connection (least recently used dropped first). Default 256. */
  readonly statementCacheSize?: number;
}

// One async context for every driver this module makes: core keys what it
// stores by connection entry, so drivers can share it, and Node's cost per
// promise grows with the number of AsyncLocalStorage instances in use.
const asyncContext = new AsyncLocalStorage();

/** Node's native SHA-256: core hashes every stored file and node with it. */
const hash = nodeCryptoHash(crypto);

const files = syncProbe({
  cwd: () => process.cwd(),
  realpath: (path) => realpathSync.native(path),
  isDirectory: (path) => statSync(path).isDirectory(),
  checkWritable: (path) => accessSync(path, constants.W_OK),
});

/** The file reads a read-only open looks at the database with first (port/read-only-facts.ts). */
const fileReads = { openSync, readSync, closeSync, statSync };

/** The better-sqlite3 adapter: a local SQLite file per location. */
export function nodeDriver(options: NodeDriverOptions = {}): Driver {
  checkNames(options, ["statementCacheSize"], "nodeDriver's options");
  const cacheSize = options.statementCacheSize ?? 256;
  return {
    name: "better-sqlite3",
    asyncContext,
    hash,
    canonicalize: (location) => canonicalFilePath(location, files),
    async remove(location: string): Promise<void> {
      removeDatabaseFiles(location, (file) => rmSync(file, { force: true }));
    },
    listDatabases: (directory) =>
      listDatabaseFiles(directory, (path) => readdirSync(path, { withFileTypes: true }), files),
    async open(location: string, open: OpenOptions): Promise<DriverConnection> {
      await checkFileOpenable(location, open, files);
      let db: Database.Database;
      const plan = open.readOnly
        ? planReadOnlyOpen(location, readOnlyFacts(location, fileReads))
        : undefined;
      try {
        db = new Database(plan === "immutable" ? readOnlyUri(location, plan) : location, {
          readonly: open.readOnly,
          fileMustExist: !open.create || open.readOnly,
          timeout: open.busyTimeoutMs,
        });
      } catch (error) {
        if (plan === "immutable" && process.env.SQLITE_USE_URI !== "1") {
          throw new RunledgerError(
            "cannot_open",
            `cannot open ${location} read-only: better-sqlite3 was loaded without URI ` +
              "filenames; set SQLITE_USE_URI=1 in the environment (or import " +
              "@runledger/adapter-node before better-sqlite3 is first used)",
            { cause: error },
          );
        }
        throw translate(error, `cannot open ${location}`);
      }
      try {
        db.defaultSafeIntegers(true);
        // exec, not pragma(): no statement object is prepared for a setting.
        // A read-only handle still lets BEGIN IMMEDIATE through; query_only refuses it with
        // SQLITE_READONLY, as adapter-libsql does, so no write transaction starts on it.
        db.exec(
          open.readOnly
            ? "PRAGMA foreign_keys = ON; PRAGMA query_only = ON"
            : "PRAGMA foreign_keys = ON",
        );
      } catch (error) {
        db.close();
        throw translate(error, `cannot prepare ${location}`);
      }
      return new NodeConnection(db, cacheSize);
    },
  };
}
