import { AsyncLocalStorage } from "node:async_hooks";
import crypto from "node:crypto";
import fs from "node:fs";
import {
  checkNames,
  type Driver,
  type DriverConnection,
  nodeRuntime,
  type OpenOptions,
  planReadOnlyOpen,
  RunledgerError,
  readOnlyUri,
  type StagedDatabase,
  type StageOptions,
} from "@runledger/core/port";
import Database from "better-sqlite3";
import { NodeConnection } from "./connection.js";
import { translate } from "./errors.js";
import { StagedNodeDatabase } from "./staged.js";

// better-sqlite3 reads URI filenames only when SQLITE_USE_URI=1 is set before
// its native addon loads (on the first `new Database`). A read-only open
// needs one for `immutable=1` (see @runledger/core's port/read-only.ts). Every
// location this driver opens otherwise is an absolute path, never a `file:` string.
process.env.SQLITE_USE_URI ??= "1";

export interface NodeDriverOptions {
  /** Prepared statements kept per connection (least recently used dropped first). Default 256. */
  readonly statementCacheSize?: number;
}

/** The async context, hash and file calls every driver this module makes shares. */
const node = nodeRuntime({ fs, crypto, AsyncLocalStorage, cwd: () => process.cwd() });

/** The better-sqlite3 adapter: a local SQLite file per location. */
export function nodeDriver(options: NodeDriverOptions = {}): Driver {
  checkNames(options, ["statementCacheSize"], "nodeDriver's options");
  const cacheSize = options.statementCacheSize ?? 256;
  return {
    name: "better-sqlite3",
    asyncContext: node.asyncContext,
    hash: node.hash,
    canonicalize: node.canonicalize,
    remove: node.remove,
    listDatabases: node.listDatabases,
    // A new run is built in memory and written whole: one write and one sync
    // instead of SQLite's syncs in place (see StagedNodeDatabase).
    async stage(location: string, stage: StageOptions): Promise<StagedDatabase | undefined> {
      const syncDirectory = stage.synchronous === "full";
      const placement = {
        location,
        // An existing run (a create that only opens) costs one stat here; the open checks the rest.
        async mayPlace(at: string) {
          if (node.exists(at)) return false;
          await node.checkFileOpenable(at, { create: true, readOnly: false });
          return true;
        },
        place: (at: string, image: Uint8Array) => node.publish(at, image, { syncDirectory }),
      };
      if (!(await placement.mayPlace(location))) return undefined;
      const db = new Database(":memory:");
      try {
        db.defaultSafeIntegers(true);
        db.exec("PRAGMA foreign_keys = ON");
      } catch (error) {
        db.close();
        throw translate(error, `cannot stage ${location}`);
      }
      return new StagedNodeDatabase(db, cacheSize, placement);
    },
    async open(location: string, open: OpenOptions): Promise<DriverConnection> {
      await node.checkFileOpenable(location, open);
      let db: Database.Database;
      const plan = open.readOnly
        ? planReadOnlyOpen(location, node.readOnlyFacts(location))
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
