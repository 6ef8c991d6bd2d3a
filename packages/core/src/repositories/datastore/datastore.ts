/**
 * A datastore handle: documents (path → bytes, SHA-256) in one database
 * reached through the port, and the hook its repositories write through.
 *
 * Invariants:
 * - A namespace prefixes every path: the handle for namespace `ns` stores
 *   `ns/<path>` and sees only paths under `ns/`; the repositories and the
 *   route always speak the un-prefixed path.
 * - Every write is one transaction (`write`): the documents it puts or
 *   deletes, the route-1 signals it records and — because the route stages
 *   inside it — a refused typed staging all land or roll back together.
 * - The format is read when the handle opens and changes only through
 *   `optIntoFormat3`, which is allowed only while the datastore is new and
 *   empty: no document, no sync signal, no marker.
 * - Every write transaction first reads the marker row (one primary-key
 *   lookup, under the write lock) and refuses with
 *   `datastore_format_changed`, before anything is written, when it no
 *   longer says the format this handle opened with — another handle opted
 *   the datastore in meanwhile. So a handle never writes by a stale format
 *   (a format-2 write into a format-3 datastore would escape the log).
 * - What a write stages into a bound unit is provisional
 *   (`withStagingScope`): kept only when the write's COMMIT succeeded,
 *   discarded when it rolled back or its COMMIT failed.
 * - Every document read a repository makes goes through a DocumentReader,
 *   which tells the hook's observer, so a test can prove format 2 reads
 *   nothing extra.
 * - On format 3 the commit log is the source of truth: a document whose
 *   staged change did not land (refused, held back, abandoned) is put back
 *   to what the log holds (`reconcile`; the hook's reconciler, which a bound
 *   unit calls when it is decided). That write records no route-1 signal and
 *   stages nothing: the log already holds that state.
 */
import type { DatabaseAccess } from "../../commit-log/context.js";
import type { CommitLog } from "../../commit-log/log.js";
import { landedContentMissing, reconciledKey } from "../../commit-log/reader.js";
import type { LandedVersion, ReconciledKey } from "../../commit-log/types.js";
import { toHex } from "../../port/bytes.js";
import type { Executor } from "../../port/driver.js";
import { RunledgerError } from "../../port/errors.js";
import { splitPosix } from "../../port/files.js";
import { prefixCondition } from "../../port/prefix-range.js";
import type { ChangeHook, DatastoreFormat, PathChange, RouteObserver } from "../../routing/hook.js";
import { withStagingScope } from "../../routing/route.js";
import { DatastoreHook, type DocumentEntry, DocumentReader, DocumentWriter } from "./documents.js";
import { type FormatMarker, formatOf, markerFor, serializeMarker } from "./marker.js";

export interface DatastoreOptions {
  readonly namespace?: string;
  readonly observer?: RouteObserver;
}

/** The marker as a handle read it: its format, and the stored text (undefined: no marker). */
export interface OpenedFormat {
  readonly format: DatastoreFormat;
  readonly marker: string | undefined;
}

const MARKER_ROW = "SELECT marker FROM format_marker WHERE singleton = 1";

export class Datastore {
  readonly #access: DatabaseAccess;
  readonly #release: () => Promise<void>;
  readonly #hook: DatastoreHook;
  readonly #prefix: string;
  /** The marker text this handle's format was read from: a write finding the same text skips parsing. */
  #marker: string | undefined;
  #released = false;
  readonly namespace: string | undefined;

  /** @internal Opened through DatastoreStore. */
  constructor(
    access: DatabaseAccess,
    opened: OpenedFormat,
    options: DatastoreOptions,
    release: () => Promise<void>,
  ) {
    this.#access = access;
    this.#release = release;
    this.namespace = options.namespace;
    this.#prefix = options.namespace === undefined ? "" : `${options.namespace}/`;
    this.#hook = new DatastoreHook(opened.format, options.observer);
    this.#hook.reconciler = {
      reconcile: async (versions) => {
        if (this.#released) return false;
        await this.#putBack(versions);
        return true;
      },
    };
    this.#marker = opened.marker;
  }

  get location(): string {
    return this.#access.location;
  }

  /**
   * The datastore's root: the directory its file is in, which a vault's
   * directories are stored relative to (docs/routing.md). Undefined for a
   * datastore on a server, whose location is a URL: it has no local root.
   */
  get root(): string | undefined {
    const location = this.#access.location;
    return location.startsWith("/") ? splitPosix(location).directory : undefined;
  }

  get format(): DatastoreFormat {
    return this.#hook.format;
  }

  /** The identity every repository on this handle writes through. */
  get hook(): ChangeHook {
    return this.#hook;
  }

  /**
   * One write transaction on behalf of `caller` (an operation name, for
   * observers). It first checks that the datastore is still in the format
   * this handle opened with (`datastore_format_changed` otherwise, nothing
   * written); what it stages into a bound unit is kept only if it commits.
   */
  write<T>(caller: string, fn: (writer: DocumentWriter) => Promise<T>): Promise<T> {
    return withStagingScope(this.#hook, () => this.#transact(caller, fn));
  }

  #transact<T>(caller: string, fn: (writer: DocumentWriter) => Promise<T>): Promise<T> {
    return this.#access.transact(async (tx) => {
      await this.#checkFormat(tx);
      const writer = new DocumentWriter(tx, this.#prefix, this.#hook);
      this.#hook.caller = caller;
      this.#hook.writer = writer;
      try {
        return await fn(writer);
      } finally {
        this.#hook.writer = undefined;
        this.#hook.caller = "";
      }
    });
  }

  /**
   * Refuses the write when the marker no longer says this handle's format.
   * One primary-key read of a one-row table inside the write transaction,
   * so it sees every committed opt-in, by any handle or process.
   */
  async #checkFormat(tx: Executor): Promise<void> {
    const row = (await tx.execute(MARKER_ROW)).rows[0];
    const stored = row === undefined ? undefined : String(row.marker);
    if (stored === this.#marker) return;
    const opened = this.#hook.format;
    let found: DatastoreFormat | "unreadable";
    try {
      found = formatOf(stored, this.location);
    } catch {
      found = "unreadable";
    }
    if (found === opened) {
      this.#marker = stored;
      return;
    }
    throw new RunledgerError(
      "datastore_format_changed",
      `the datastore at ${this.location} is now ${found === "unreadable" ? "of a format this build cannot read" : `format ${found}`}, ` +
        `but this handle opened it as format ${opened} (another handle or process changed it); ` +
        "release this handle and open the datastore again. Nothing was written",
      { details: { opened, found, marker: stored?.slice(0, 200) ?? null } },
    );
  }

  /** One consistent snapshot on behalf of `caller`. */
  read<T>(caller: string, fn: (reader: DocumentReader) => Promise<T>): Promise<T> {
    return this.#access.read(async (scope) => {
      this.#hook.caller = caller;
      try {
        return await fn(new DocumentReader(scope, this.#prefix, this.#hook));
      } finally {
        this.#hook.caller = "";
      }
    });
  }

  /** Every document of this handle's namespace, in path order (not observed: for checks and tools). */
  documents(): Promise<DocumentEntry[]> {
    return this.#access.read(async (scope) => {
      const within = prefixCondition("path", this.#prefix);
      const { rows } = await scope.execute(
        `SELECT path, data, digest FROM document WHERE ${within.sql} ORDER BY path`,
        within.params,
      );
      return rows.map((row) => ({
        path: String(row.path).slice(this.#prefix.length),
        bytes: row.data as Uint8Array,
        sha256: toHex(row.digest as Uint8Array),
      }));
    });
  }

  /** The route-1 signals recorded under this namespace, in order. */
  syncChanges(): Promise<PathChange[]> {
    return this.#access.read(async (scope) => {
      const within = prefixCondition("path", this.#prefix);
      const { rows } = await scope.execute(
        `SELECT path, change FROM sync_change WHERE ${within.sql} ORDER BY sequence`,
        within.params,
      );
      return rows.map((row) => ({
        kind: row.change as PathChange["kind"],
        path: String(row.path).slice(this.#prefix.length),
      }));
    });
  }

  /** The stored marker, or undefined (format 2). */
  marker(): Promise<FormatMarker | undefined> {
    return this.#access.read(async (scope) => {
      const row = (await scope.execute("SELECT marker FROM format_marker")).rows[0];
      return row === undefined ? undefined : (JSON.parse(String(row.marker)) as FormatMarker);
    });
  }

  /**
   * Opts the datastore into format 3. Allowed only while it is new and
   * empty — no document (in any namespace), no sync signal, no marker —
   * otherwise `format_opt_in_refused` and nothing changes.
   */
  async optIntoFormat3(): Promise<void> {
    const marker = await this.#access.transact(async (tx) => {
      const count = async (sql: string) => Number((await tx.execute(sql)).rows[0]!.n);
      const documents = await count("SELECT count(*) AS n FROM document");
      const signals = await count("SELECT count(*) AS n FROM sync_change");
      const markers = await count("SELECT count(*) AS n FROM format_marker");
      if (documents + signals + markers > 0) {
        throw new RunledgerError(
          "format_opt_in_refused",
          `cannot opt the datastore at ${this.location} into format 3: only a new, empty ` +
            `datastore may opt in, and it holds ${documents} document(s), ${signals} sync ` +
            `signal(s) and ${markers} format marker(s). Nothing was changed`,
          { details: { documents, signals, markers } },
        );
      }
      const marker = serializeMarker(markerFor(3));
      await tx.execute("INSERT INTO format_marker (singleton, marker) VALUES (1, ?)", [marker]);
      return marker;
    });
    this.#hook.format = 3;
    this.#marker = marker;
  }

  /**
   * Puts the documents at these keys back to what the commit log holds:
   * the log's latest landed content, or no document where the log holds a
   * tombstone or never had the key. What a unit bound to this handle does by
   * itself when it is decided; call it for a unit decided elsewhere (resumed
   * in another process, or decided after this handle was released). Format
   * 3 only (`reconcile_refused` on format 2: there is no log to follow).
   * Records no route-1 signal and stages nothing.
   */
  async reconcile(
    log: CommitLog,
    keys: readonly { readonly partition: string; readonly key: string }[],
  ): Promise<ReconciledKey[]> {
    if (this.#hook.format !== 3) {
      throw new RunledgerError(
        "reconcile_refused",
        `the datastore at ${this.location} is format ${this.#hook.format}: its documents follow ` +
          "no commit log, so there is nothing to reconcile them to. Nothing was changed",
        { details: { format: this.#hook.format } },
      );
    }
    const versions = await log.read((reader) => reader.landedVersions(keys));
    for (const version of versions) {
      if (version.state === "present" && version.bytes === undefined) {
        throw landedContentMissing(version, ". Nothing was changed");
      }
    }
    await this.#putBack(versions);
    return versions.map(reconciledKey);
  }

  /**
   * One write transaction (format-checked like every write, but opening no
   * staging scope: it stages nothing, and may run while a unit is deciding)
   * that writes each version: its bytes, or no document. No route-1 signal.
   */
  async #putBack(versions: readonly LandedVersion[]): Promise<void> {
    if (versions.length === 0) return;
    await this.#transact("datastore.reconcile", async (writer) => {
      for (const version of versions) {
        const path = `${version.partition}/${version.key}`;
        if (version.state === "absent") {
          await writer.delete(path);
        } else {
          if (version.bytes === undefined) {
            throw new RunledgerError(
              "invalid_argument",
              `the version of ${path} to reconcile to carries no bytes; read it with the log's landedVersions`,
              { details: { path, sha256: version.sha256 } },
            );
          }
          await writer.put(path, version.bytes);
        }
      }
    });
  }

  release(): Promise<void> {
    this.#released = true;
    return this.#release();
  }

  [Symbol.asyncDispose](): Promise<void> {
    return this.release();
  }

  /** @internal The format the stored marker says, and its text (read at open). */
  static async formatAt(access: DatabaseAccess): Promise<OpenedFormat> {
    return access.read(async (scope) => {
      const row = (await scope.execute(MARKER_ROW)).rows[0];
      const marker = row === undefined ? undefined : String(row.marker);
      return { format: formatOf(marker, access.location), marker };
    });
  }
}
