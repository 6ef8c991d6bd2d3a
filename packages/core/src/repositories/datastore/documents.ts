/**
 * A datastore's documents as its repositories read and write them, inside
 * one of the handle's snapshots or writes: the namespace prefixed to every
 * path, every read told to the route's observer, and the route-1 signal a
 * write records; and the hook that knows the write in progress.
 */
import type { DocumentReconciler } from "../../commit-log/types.js";
import { fromHex, toHex } from "../../port/bytes.js";
import type { Executor } from "../../port/driver.js";
import { RunledgerError } from "../../port/errors.js";
import { sha256Hex } from "../../port/hash.js";
import { prefixCondition } from "../../port/prefix-range.js";
import type { ChangeHook, DatastoreFormat, PathChange, RouteObserver } from "../../routing/hook.js";

/** A document as a repository sees it. */
export interface DocumentEntry {
  /** The path without the namespace. */
  readonly path: string;
  readonly bytes: Uint8Array;
  readonly sha256: string;
}

export class DocumentReader {
  readonly #executor: Executor;
  readonly #prefix: string;
  readonly #hook: DatastoreHook;

  /** @internal */
  constructor(executor: Executor, prefix: string, hook: DatastoreHook) {
    this.#executor = executor;
    this.#prefix = prefix;
    this.#hook = hook;
  }

  /** The document's bytes, or undefined. */
  async get(path: string): Promise<Uint8Array | undefined> {
    this.#hook.observed("get", path);
    const { rows } = await this.#executor.execute("SELECT data FROM document WHERE path = ?", [
      this.#prefix + path,
    ]);
    return rows[0]?.data as Uint8Array | undefined;
  }

  /** The document's SHA-256 (hex), or undefined. */
  async digest(path: string): Promise<string | undefined> {
    this.#hook.observed("digest", path);
    const { rows } = await this.#executor.execute("SELECT digest FROM document WHERE path = ?", [
      this.#prefix + path,
    ]);
    return rows[0] === undefined ? undefined : toHex(rows[0].digest as Uint8Array);
  }

  /** Paths under `directory/` (without the namespace), in path order. */
  async list(directory: string): Promise<string[]> {
    this.#hook.observed("list", directory);
    const within = prefixCondition("path", `${this.#prefix}${directory}/`);
    const { rows } = await this.#executor.execute(
      `SELECT path FROM document WHERE ${within.sql} ORDER BY path`,
      within.params,
    );
    return rows.map((row) => String(row.path).slice(this.#prefix.length));
  }
}

export class DocumentWriter extends DocumentReader {
  readonly #executor: Executor;
  readonly #prefix: string;

  /** @internal */
  constructor(executor: Executor, prefix: string, hook: DatastoreHook) {
    super(executor, prefix, hook);
    this.#executor = executor;
    this.#prefix = prefix;
  }

  /** Stores bytes at a path; returns their SHA-256 (hex). */
  async put(path: string, bytes: Uint8Array): Promise<string> {
    const sha256 = sha256Hex(bytes);
    await this.#executor.execute(
      `INSERT INTO document (path, data, digest) VALUES (?, ?, ?)
ON CONFLICT (path) DO UPDATE SET data = excluded.data, digest = excluded.digest`,
      [this.#prefix + path, bytes, fromHex(sha256)],
    );
    return sha256;
  }

  /** Removes a path; true when it held a document. */
  async delete(path: string): Promise<boolean> {
    const { changes } = await this.#executor.execute("DELETE FROM document WHERE path = ?", [
      this.#prefix + path,
    ]);
    return changes > 0;
  }

  /** @internal The route-1 signal, recorded in this write. */
  async recordSignal(change: PathChange): Promise<void> {
    await this.#executor.execute("INSERT INTO sync_change (path, change) VALUES (?, ?)", [
      this.#prefix + change.path,
      change.kind,
    ]);
  }
}

/** @internal The hook of one handle: knows the write in progress and its caller. */
export class DatastoreHook implements ChangeHook {
  format: DatastoreFormat;
  caller = "";
  readonly observer: RouteObserver | undefined;
  writer: DocumentWriter | undefined;
  reconciler: DocumentReconciler | undefined;

  constructor(format: DatastoreFormat, observer: RouteObserver | undefined) {
    this.format = format;
    this.observer = observer;
  }

  async signal(change: PathChange): Promise<void> {
    if (this.writer === undefined) {
      throw new RunledgerError(
        "invalid_state",
        "signalChange was called outside a datastore write; call it inside datastore.write",
      );
    }
    await this.writer.recordSignal(change);
  }

  observed(kind: "get" | "digest" | "list", key: string): void {
    this.observer?.record({ route: "read", caller: this.caller, kind, key });
  }
}
