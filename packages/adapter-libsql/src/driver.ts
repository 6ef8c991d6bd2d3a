import { AsyncLocalStorage } from "node:async_hooks";
import crypto from "node:crypto";
import fs from "node:fs";
import { pathToFileURL } from "node:url";
import { type Client, createClient } from "@libsql/client";
import {
  checkNames,
  type Driver,
  type DriverConnection,
  nodeRuntime,
  type OpenOptions,
  planReadOnlyOpen,
  RunledgerError,
  readOnlyUri,
} from "@runledger/core/port";
import { LibsqlConnection } from "./connection.js";
import { translate } from "./errors.js";
import { KeptHttpStream } from "./kept-http-stream.js";
import { type KeptStream, KeptWsStream } from "./kept-stream.js";
import { LocalConnection, type LocalHandle, openHandle } from "./local.js";
import { type LibsqlLocation, parseLocation, redactLocation } from "./location.js";
import {
  deleteNamespace,
  diagnoseClosedWebSocket,
  ensureNamespace,
  type NamespaceAdmin,
} from "./namespaces.js";
import { type NodeFetch, nodeFetch } from "./node-fetch.js";
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
  /**
   * Makes the local file an embedded replica of this database on a libSQL
   * server (`http(s)://` or `libsql://`): reads are served from the file,
   * writes (and every write transaction) are sent to the server, and the
   * file is synced from the server when a run is opened, after each of its
   * own writes, and every `syncInterval` seconds. `authToken` is sent to it.
   * A replica follows one database: the driver opens one file with it. See
   * docs/remote.md.
   */
  readonly syncUrl?: string;
  /**
   * With `syncUrl`: also sync every this many seconds, in the background.
   * Default: only as a run opens and after each of its own writes — and then
   * a read snapshot is served from the file; with an interval the file may
   * change under a read, so the server serves each snapshot.
   */
  readonly syncInterval?: number;
}

/** The async context, hash and file calls every driver this module makes shares. */
const node = nodeRuntime({ fs, crypto, AsyncLocalStorage, cwd: () => process.cwd() });

/**
 * The libSQL adapter: a local file (a path or a `file:` URL) through libSQL's
 * embedded engine, or a remote libSQL server (`libsql:`, `http(s):`, `ws(s):`).
 * A local file's identity is its canonical path, the same as adapter-node's,
 * so both adapters agree on which database a location names.
 *
 * (Longer than a function should be: its body is the driver it returns,
 * five short methods sharing the checked options and the replica's file.)
 */
export function libsqlDriver(options: LibsqlDriverOptions = {}): Driver {
  checkNames(
    options,
    ["authToken", "adminUrl", "adminAuthKey", "encryptionKey", "syncUrl", "syncInterval"],
    "libsqlDriver's options",
  );
  const replica = checkReplicaOptions(options);
  if (
    options.encryptionKey !== undefined &&
    (typeof options.encryptionKey !== "string" || options.encryptionKey === "")
  ) {
    throw new RunledgerError(
      "invalid_argument",
      "libsqlDriver's encryptionKey must be a non-empty string",
    );
  }
  const admin: NamespaceAdmin | undefined =
    options.adminUrl === undefined
      ? undefined
      : {
          adminUrl: options.adminUrl,
          ...(options.adminAuthKey === undefined ? {} : { adminAuthKey: options.adminAuthKey }),
        };
  /** The one file a driver with syncUrl replicates into, once it has opened it. */
  let replicaPath: string | undefined;
  const claimReplicaFile = async (location: string, parsed: LibsqlLocation): Promise<void> => {
    if (replica === undefined) return;
    if (parsed.kind !== "file") {
      throw new RunledgerError(
        "invalid_argument",
        `cannot open ${parsed.url} through a driver with syncUrl: an embedded replica is a local file; open the server's URL with a driver without syncUrl`,
      );
    }
    const canonical = await node.canonicalize(parsed.path);
    if (replicaPath !== undefined && replicaPath !== canonical) {
      throw new RunledgerError(
        "invalid_argument",
        `cannot open ${location} as a replica of ${redactLocation(replica.syncUrl)}: this driver replicates it into ${replicaPath} already, and a replica follows one database; make a driver for each`,
        { details: { replica: replicaPath } },
      );
    }
    replicaPath = canonical;
  };
  return {
    name: "libsql",
    asyncContext: node.asyncContext,
    hash: node.hash,
    async canonicalize(location: string): Promise<string> {
      const parsed = parse(location);
      return parsed.kind === "file" ? node.canonicalize(parsed.path) : parsed.url;
    },
    async remove(location: string): Promise<void> {
      const parsed = parse(location);
      if (parsed.kind === "file") {
        await node.remove(parsed.path);
      } else if (admin !== undefined) {
        await deleteNamespace(admin, parsed.url);
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
      return node.listDatabases(parsed.path);
    },
    async open(location: string, open: OpenOptions): Promise<DriverConnection> {
      const parsed = parse(location);
      if (parsed.kind === "remote" && options.encryptionKey !== undefined) {
        throw new RunledgerError(
          "invalid_argument",
          `cannot open ${parsed.url} with an encryptionKey: it encrypts local files only (a server encrypts its own); drop it for a remote location`,
        );
      }
      await claimReplicaFile(location, parsed);
      if (parsed.kind === "file") {
        // A replica's file is made by its first sync, whether or not the run is new.
        await node.checkFileOpenable(
          parsed.path,
          replica === undefined ? open : { ...open, create: true },
        );
      } else if (open.create && !open.readOnly && admin !== undefined) {
        await ensureNamespace(admin, parsed.url);
      }
      if (parsed.kind === "file" && replica === undefined) {
        return openLocal(location, parsed.path, open, options);
      }
      // Over HTTP the client sends its requests with node:http instead of the global fetch.
      const web = parsed.kind === "remote" && /^https?:/.test(parsed.url) ? nodeFetch() : undefined;
      const client = newClient(location, parsed, open, options, replica, web?.fetch);
      const connection = new LibsqlConnection(client, {
        ...(web === undefined ? {} : { closeFetch: web.close }),
        ...(replica === undefined
          ? {}
          : { replica: replica.syncInterval === undefined ? "local" : "server" }),
        readOnly: open.readOnly,
        busyTimeoutMs: open.busyTimeoutMs,
        busyDeadlineMs: open.busyDeadlineMs ?? open.busyTimeoutMs,
        ...(parsed.kind === "remote" && replica === undefined && !open.readOnly
          ? keptStreamFor(parsed.url, options.authToken)
          : {}),
      });
      try {
        await connection.setUp();
      } catch (error) {
        // A client whose connection failed may fail to close too; the first failure is the one to report.
        await connection.close().catch(() => undefined);
        throw await setUpFailure(error, location, parsed, open, options);
      }
      return connection;
    },
  };
}

/**
 * A local file, through libSQL's engine directly (local.ts): read-only as
 * SQLite's own mode (`mode=ro`, or `immutable=1` where port/read-only.ts
 * says so), with the encryptionKey when given.
 */
function openLocal(
  location: string,
  path: string,
  open: OpenOptions,
  options: LibsqlDriverOptions,
): DriverConnection {
  const local = {
    path: open.readOnly
      ? readOnlyUri(path, planReadOnlyOpen(path, node.readOnlyFacts(path)))
      : path,
    busyTimeoutMs: open.busyTimeoutMs,
    readOnly: open.readOnly,
    ...(options.encryptionKey === undefined ? {} : { encryptionKey: options.encryptionKey }),
  };
  let handle: LocalHandle | undefined;
  try {
    handle = openHandle(local);
    const connection = new LocalConnection(handle, local);
    connection.setUp();
    return connection;
  } catch (error) {
    // Closed as it is, nothing folded or written; the first failure is the one to report.
    try {
      handle?.close();
    } catch {
      // the handle goes with its statements, whenever they are collected
    }
    throw localFailure(error, location, options);
  }
}

/** What a local file that failed to open is to the caller: one an encryptionKey does not open is `encryption_key_refused`. */
function localFailure(
  error: unknown,
  location: string,
  options: LibsqlDriverOptions,
): RunledgerError {
  const translated = translate(error, `cannot prepare ${location}`);
  return options.encryptionKey !== undefined && translated.code === "not_a_database"
    ? keyRefusal(translated, location)
    : translated;
}

/**
 * A server sends a transaction it gets whole on a stream kept open
 * (kept-stream.ts, kept-http-stream.ts). `libsql://` is WebSocket over TLS
 * unless `tls=0` says plain; an address with any other query is left to the
 * client.
 */
function keptStreamFor(url: string, authToken: string | undefined): { kept?: KeptStream } {
  const address = new URL(url);
  const tls = address.searchParams.get("tls");
  if (
    address.protocol === "libsql:" &&
    [...address.searchParams.keys()].every((k) => k === "tls")
  ) {
    address.protocol = tls === "0" ? "ws:" : "wss:";
    address.search = "";
  }
  if (address.search !== "") return {};
  if (address.protocol === "ws:" || address.protocol === "wss:") {
    return { kept: new KeptWsStream(address.href, authToken) };
  }
  if (address.protocol === "http:" || address.protocol === "https:") {
    return { kept: new KeptHttpStream(address.href, authToken) };
  }
  return {};
}

/** The replica options checked (undefined without syncUrl). */
type ReplicaOptions = ReturnType<typeof checkReplicaOptions>;

/** The client of one connection: a server, or a replica (a local file that follows one). */
function newClient(
  location: string,
  parsed: LibsqlLocation,
  open: OpenOptions,
  options: LibsqlDriverOptions,
  replica: ReplicaOptions,
  fetch: NodeFetch["fetch"] | undefined,
): Client {
  // A replica writes its file to sync, read-only or not: its own URL, never mode=ro.
  const url = parsed.kind === "file" ? pathToFileURL(parsed.path).href : parsed.url;
  try {
    return createClient({
      url,
      intMode: "bigint",
      concurrency: 1,
      timeout: open.busyTimeoutMs,
      ...(fetch === undefined ? {} : { fetch }),
      ...(options.authToken === undefined ? {} : { authToken: options.authToken }),
      ...(replica === undefined
        ? {}
        : {
            syncUrl: replica.syncUrl,
            ...(replica.syncInterval === undefined ? {} : { syncInterval: replica.syncInterval }),
          }),
    });
  } catch (error) {
    throw translate(error, `cannot open ${location}`);
  }
}

/**
 * What a connection that failed to set up is to the caller: a WebSocket the
 * server closed early is diagnosed (a refused token, a missing namespace).
 */
async function setUpFailure(
  error: unknown,
  location: string,
  parsed: LibsqlLocation,
  open: OpenOptions,
  options: LibsqlDriverOptions,
): Promise<RunledgerError> {
  const doing = `cannot prepare ${location}`;
  if (parsed.kind === "remote" && isWebSocketClosedEarly(error)) {
    return (
      (await diagnoseClosedWebSocket(
        parsed.url,
        options.authToken,
        doing,
        error,
        !open.readOnly,
      )) ?? translate(error, doing, true)
    );
  }
  return translate(error, doing, parsed.kind === "remote");
}

/** The replica options checked: undefined without syncUrl. */
function checkReplicaOptions(
  options: LibsqlDriverOptions,
): { syncUrl: string; syncInterval?: number } | undefined {
  const { syncUrl, syncInterval } = options;
  if (syncUrl === undefined) {
    if (syncInterval !== undefined) {
      throw new RunledgerError("invalid_argument", "libsqlDriver's syncInterval needs syncUrl");
    }
    return undefined;
  }
  let server: LibsqlLocation;
  try {
    server = typeof syncUrl === "string" ? parseLocation(syncUrl) : { kind: "file", path: "" };
  } catch {
    server = { kind: "file", path: "" };
  }
  if (server.kind !== "remote") {
    throw new RunledgerError(
      "invalid_argument",
      `libsqlDriver's syncUrl is the URL of a database on a libSQL server (http://, https://, libsql://); got ${JSON.stringify(typeof syncUrl === "string" ? redactLocation(syncUrl) : syncUrl)}`,
    );
  }
  if (options.encryptionKey !== undefined) {
    throw new RunledgerError(
      "invalid_argument",
      "libsqlDriver takes syncUrl or encryptionKey, not both: an encrypted embedded replica is not supported",
    );
  }
  if (
    syncInterval !== undefined &&
    (typeof syncInterval !== "number" || !Number.isFinite(syncInterval) || syncInterval <= 0)
  ) {
    throw new RunledgerError(
      "invalid_argument",
      `libsqlDriver's syncInterval is a number of seconds above 0; got ${JSON.stringify(syncInterval)}`,
    );
  }
  return syncInterval === undefined ? { syncUrl } : { syncUrl, syncInterval };
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
