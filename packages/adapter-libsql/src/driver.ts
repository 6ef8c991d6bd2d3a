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
import { pathToFileURL } from "node:url";
import { type Client, createClient } from "@libsql/client";
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
import { LibsqlConnection } from "./connection.js";
import { translate } from "./errors.js";
import { type LibsqlLocation, parseLocation, redactLocation } from "./location.js";
import { deleteNamespace, diagnoseClosedWebSocket, ensureNamespace } from "./namespaces.js";
import { isWebSocketClosedEarly } from "./remote-errors.js";

export interface LibsqlDriverOptions {
  /** The token for a remote server (sqld, Turso). Never put it in the URL. */
  readonly authToken?: string;
  /**
   * The admin API of a libSQL server started with `--enable-namespaces`
   * (sqld's `--admin-listen-addr`): with it, opening a run with `create`
   * creates the namespace its URL names (`http://RUN.host:port`) when
   * missing. See docs/remote.md.
   */
  readonly adminUrl?: string;
  /** The admin API's key (sqld's `--admin-auth-key`), sent as `Authorization: Basic <key>`, as sqld wants it. */
  readonly adminAuthKey?: string;
  /**
   * Encrypts local files at rest with libSQL's own encryption (as
   * @libsql/client provides it): the file on disk is not readable as plain
   * SQLite, and opening it without this key, or with another, is refused
   * (`encryption_key_refused`). Every open of the file needs the same key.
   * A remote location refuses it: a server encrypts its own files.
   */
  readonly encryptionKey?: string;
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

/**
 * The libSQL adapter: a local file (a path or a `file:` URL) through libSQL's
 * embedded engine, or a remote libSQL server (`libsql:`, `http(s):`, `ws(s):`).
 * A local file's identity is its canonical path, the same as adapter-node's,
 * so both adapters agree on which database a location names.
 */
export function libsqlDriver(options: LibsqlDriverOptions = {}): Driver {
  checkNames(
    options,
    ["authToken", "adminUrl", "adminAuthKey", "encryptionKey"],
    "libsqlDriver's options",
  );
  if (
    options.encryptionKey !== undefined &&
    (typeof options.encryptionKey !== "string" || options.encryptionKey === "")
  ) {
    throw new RunledgerError(
      "invalid_argument",
      "libsqlDriver's encryptionKey must be a non-empty string",
    );
  }
  return {
    name: "libsql",
    asyncContext,
    hash,
    async canonicalize(location: string): Promise<string> {
      const parsed = parse(location);
      return parsed.kind === "file" ? canonicalFilePath(parsed.path, files) : parsed.url;
    },
    async remove(location: string): Promise<void> {
      const parsed = parse(location);
      if (parsed.kind === "file") {
        removeDatabaseFiles(parsed.path, (file) => rmSync(file, { force: true }));
      } else if (options.adminUrl !== undefined) {
        await deleteNamespace(
          {
            adminUrl: options.adminUrl,
            ...(options.adminAuthKey === undefined ? {} : { adminAuthKey: options.adminAuthKey }),
          },
          parsed.url,
        );
      } else {
        throw new RunledgerError(
          "remove_unsupported",
          `cannot remove ${parsed.url}: deleting a database on a server needs its admin API; pass libsqlDriver({ adminUrl })`,
        );
      }
    },
    async listDatabases(directory: string): Promise<string[]> {
      const parsed = parse(directory);
      if (parsed.kind === "remote") {
        throw new RunledgerError(
          "listing_unsupported",
          `cannot list the databases of ${parsed.url}: a libSQL server does not list its namespaces; ` +
            "call reconcile() without directory to check the catalog's own rows",
        );
      }
      return listDatabaseFiles(
        parsed.path,
        (path) => readdirSync(path, { withFileTypes: true }),
        files,
      );
    },
    async open(location: string, open: OpenOptions): Promise<DriverConnection> {
      const parsed = parse(location);
      if (parsed.kind === "remote" && options.encryptionKey !== undefined) {
        throw new RunledgerError(
          "invalid_argument",
          `cannot open ${parsed.url} with an encryptionKey: it encrypts local files only (a server encrypts its own); drop it for a remote location`,
        );
      }
      if (parsed.kind === "file") {
        await checkFileOpenable(parsed.path, open, files);
      } else if (open.create && !open.readOnly && options.adminUrl !== undefined) {
        await ensureNamespace(
          {
            adminUrl: options.adminUrl,
            ...(options.adminAuthKey === undefined ? {} : { adminAuthKey: options.adminAuthKey }),
          },
          parsed.url,
        );
      }
      const url = parsed.kind === "file" ? fileUrl(parsed.path, open.readOnly) : parsed.url;
      let client: Client;
      try {
        client = createClient({
          url,
          intMode: "bigint",
          concurrency: 1,
          timeout: open.busyTimeoutMs,
          ...(parsed.kind === "remote" && options.authToken !== undefined
            ? { authToken: options.authToken }
            : {}),
          ...(parsed.kind === "file" && options.encryptionKey !== undefined
            ? { encryptionKey: options.encryptionKey }
            : {}),
        });
      } catch (error) {
        throw translate(error, `cannot open ${location}`);
      }
      const connection = new LibsqlConnection(client, {
        remote: parsed.kind === "remote",
        readOnly: open.readOnly,
        busyTimeoutMs: open.busyTimeoutMs,
        encrypted: parsed.kind === "file" && options.encryptionKey !== undefined,
      });
      try {
        await connection.setUp();
      } catch (error) {
        // A client whose connection failed may fail to close too; the first failure is the one to report.
        await connection.close().catch(() => undefined);
        const doing = `cannot prepare ${location}`;
        if (parsed.kind === "remote" && isWebSocketClosedEarly(error)) {
          throw (
            (await diagnoseClosedWebSocket(
              parsed.url,
              options.authToken,
              doing,
              error,
              !open.readOnly,
            )) ?? translate(error, doing, true)
          );
        }
        const translated = translate(error, doing, parsed.kind === "remote");
        if (
          parsed.kind === "file" &&
          options.encryptionKey !== undefined &&
          translated.code === "not_a_database"
        ) {
          throw keyRefusal(translated, location);
        }
        throw translated;
      }
      return connection;
    },
  };
}

/**
 * The client URL of a local file. A read-only open asks SQLite itself for
 * `mode=ro` (and `immutable=1` where port/read-only.ts says so): the client
 * accepts no such query parameter, but hands its path to SQLite, which reads
 * a path that is itself a `file:` URI as one. So the URI goes in as the
 * path, its `%`, `?` and `#` escaped once more for the client's own parser.
 */
function fileUrl(path: string, readOnly: boolean): string {
  if (!readOnly) return pathToFileURL(path).href;
  const uri = readOnlyUri(path, planReadOnlyOpen(path, readOnlyFacts(path, fileReads)));
  return `file:${uri.replace(/[%?#]/g, (c) => `%${c.charCodeAt(0).toString(16).toUpperCase()}`)}`;
}

function parse(location: string): LibsqlLocation {
  try {
    return parseLocation(location);
  } catch (error) {
    throw new RunledgerError(
      "invalid_location",
      `cannot use ${JSON.stringify(redactLocation(location))}: ${(error as Error).message}`,
      { cause: error },
    );
  }
}

/**
 * A local file opened with an encryptionKey that SQLite reads as no database:
 * the key is not the file's, or the file is not encrypted. Nothing was
 * written to it.
 */
function keyRefusal(error: RunledgerError, location: string): RunledgerError {
  return new RunledgerError(
    "encryption_key_refused",
    `cannot open ${location}: the file does not open with this encryptionKey (another key encrypted it, or it is not encrypted); pass the key it was written with, or none for a plain file. Nothing was written to it`,
    { cause: error, ...(error.sqliteCode ? { sqliteCode: error.sqliteCode } : {}) },
  );
}
