/**
 * The node-sqlite3-wasm adapter: SQLite compiled to WebAssembly, reaching
 * files through Node's fs. It exists to prove docs/writing-an-adapter.md on a
 * driver unlike the shipped two — synchronous, message-only errors, its own
 * lock files, no shared memory — and is run by the conformance suite in this
 * repository's tests. It is private: not a supported backend.
 */
import { AsyncLocalStorage } from "node:async_hooks";
import fs from "node:fs";
import {
  type Driver,
  type DriverConnection,
  isWalHeader,
  nodeRuntime,
  type OpenOptions,
} from "@runledger/core/port";
import wasm from "node-sqlite3-wasm";
import { WasmConnection } from "./connection.js";
import { translate } from "./errors.js";

/**
 * The async context and file calls every driver this module makes shares.
 * No `crypto`: core hashes with its portable SHA-256 here, so the suite
 * proves that path too.
 */
const node = nodeRuntime({ fs, AsyncLocalStorage, cwd: () => process.cwd() });

/**
 * Set before the first statement touches the file. This build's defaults
 * that differ from SQLite's own go back to what core and the other adapters
 * run with: foreign keys on, triggers not recursive (it is compiled with
 * DQS=0, so double-quoted strings are identifiers only; no pragma changes
 * that, and core's SQL needs none). Its busy handler would sleep
 * synchronously, so it is off and the connection waits on timers instead.
 */
const NORMALIZE =
  "PRAGMA foreign_keys = ON; PRAGMA recursive_triggers = OFF; PRAGMA busy_timeout = 0";

/**
 * This build has no shared memory, so SQLite opens a WAL file only in
 * EXCLUSIVE locking mode, set before the first read: the connection then
 * keeps the file locked until it closes (the subject declares
 * `walSharedMemory: false`). The file's header says whether it is in WAL.
 */
function isWalFile(location: string): boolean {
  return isWalHeader(node.readOnlyFacts(location).header);
}

/** The node-sqlite3-wasm adapter: a local SQLite file per location. */
export function wasmDriver(): Driver {
  return {
    name: "node-sqlite3-wasm",
    asyncContext: node.asyncContext,
    canonicalize: node.canonicalize,
    remove: node.remove,
    listDatabases: node.listDatabases,
    async open(location: string, open: OpenOptions): Promise<DriverConnection> {
      await node.checkFileOpenable(location, open);
      let db: wasm.Database;
      try {
        db = new wasm.Database(location, {
          readOnly: open.readOnly,
          fileMustExist: !open.create || open.readOnly,
        });
      } catch (error) {
        throw translate(error, `cannot open ${location}`);
      }
      const connection = new WasmConnection(db, open.busyTimeoutMs);
      try {
        const locking = isWalFile(location) ? "; PRAGMA locking_mode = EXCLUSIVE" : "";
        await connection.executeScript(
          `${NORMALIZE}${locking}${open.readOnly ? "; PRAGMA query_only = ON" : ""}`,
        );
      } catch (error) {
        await connection.close();
        throw translate(error, `cannot prepare ${location}`);
      }
      return connection;
    },
  };
}
