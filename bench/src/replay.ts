/**
 * Record and replay: the raw driver doing exactly the work runledger does.
 *
 * `recordingDriver` wraps a driver and writes down every statement that
 * reaches the port — SQL, parameters, BEGIN/COMMIT/ROLLBACK and scripts — in
 * order, on its connections and on the staged ones a run is created whole
 * on. `replay` runs such a recording through better-sqlite3 (or libsql's
 * API of the same shape) directly: prepared statements, synchronous calls,
 * no core above; a run created whole is created whole again (built in
 * memory, written beside its file, synced, linked), as adapter-node creates
 * it. The replayed file holds the
 * same rows as the recorded one (ids and timestamps are in the parameters),
 * so the difference in time is what core's code costs on top of SQLite
 * doing the same reads and writes.
 */

import {
  closeSync,
  fstatSync,
  fsyncSync,
  linkSync,
  openSync,
  readSync,
  rmSync,
  statSync,
  writeSync,
} from "node:fs";
import type {
  BeginMode,
  ConnectionSettings,
  Driver,
  DriverConnection,
  DriverTransaction,
  SqlValue,
  StagedDatabase,
} from "@runledger/core/port";
import { applySettings } from "@runledger/core/port";
import Database from "better-sqlite3";

/** One call that reached the port. */
export type Recorded =
  | { readonly kind: "statement"; readonly sql: string; readonly params: readonly SqlValue[] }
  | { readonly kind: "script"; readonly sql: string };

export interface Recording {
  /** The calls per opened connection, in order. */
  readonly connections: Recorded[][];
  /** The calls per staged connection (a run created whole), in order of creation. */
  readonly staged: Recorded[][];
}

export function recordingDriver(inner: Driver, recording: Recording): Driver {
  return {
    name: `${inner.name} (recorded)`,
    ...(inner.asyncContext === undefined ? {} : { asyncContext: inner.asyncContext }),
    // The native hash too: without it core would hash in JavaScript and the
    // recorded run would not be the run being measured.
    ...(inner.hash === undefined ? {} : { hash: inner.hash }),
    canonicalize: (location) => inner.canonicalize(location),
    async open(location, options) {
      const calls: Recorded[] = [];
      recording.connections.push(calls);
      return recordConnection(await inner.open(location, options), calls);
    },
    ...(inner.stage === undefined
      ? {}
      : {
          // Passed on, so that a run is created as the inner driver creates it.
          async stage(location, options): Promise<StagedDatabase | undefined> {
            const staged = await inner.stage?.(location, options);
            if (staged === undefined) return undefined;
            const calls: Recorded[] = [];
            recording.staged.push(calls);
            return { ...recordConnection(staged, calls), publish: () => staged.publish() };
          },
        }),
  };
}

function recordConnection(inner: DriverConnection, calls: Recorded[]): DriverConnection {
  const connection: DriverConnection = {
    execute(sql, params = []) {
      calls.push({ kind: "statement", sql, params: [...params] });
      return inner.execute(sql, params);
    },
    executeScript(sql) {
      calls.push({ kind: "script", sql });
      return inner.executeScript(sql);
    },
    async begin(mode: BeginMode): Promise<DriverTransaction> {
      calls.push({ kind: "statement", sql: BEGIN[mode], params: [] });
      const transaction = await inner.begin(mode);
      return {
        get active() {
          return transaction.active;
        },
        execute(sql, params = []) {
          calls.push({ kind: "statement", sql, params: [...params] });
          return transaction.execute(sql, params);
        },
        executeScript(sql) {
          calls.push({ kind: "script", sql });
          return transaction.executeScript(sql);
        },
        commit() {
          calls.push({ kind: "statement", sql: "COMMIT", params: [] });
          return transaction.commit();
        },
        rollback() {
          calls.push({ kind: "statement", sql: "ROLLBACK", params: [] });
          return transaction.rollback();
        },
      };
    },
    // The settings go through this wrapper, so their PRAGMAs are recorded too.
    configure: (settings: ConnectionSettings) => applySettings(connection, settings),
    close: () => inner.close(),
  };
  return connection;
}

/** The SQL a recorded `begin` stands for, by mode. */
export const BEGIN: Record<BeginMode, string> = {
  immediate: "BEGIN IMMEDIATE",
  deferred: "BEGIN DEFERRED",
};

/**
 * A database class with better-sqlite3's synchronous API: better-sqlite3
 * itself, or libsql's (the engine under @libsql/client, for a local file).
 */
export type Engine = new (file: string, options?: { verbose?: () => void }) => Database.Database;

export interface ReplayOptions {
  /** The calls of the staged connection the run was created on, replayed first (`createWhole`). */
  readonly created?: readonly Recorded[] | undefined;
  /** The engine replayed on; default better-sqlite3. */
  readonly engine?: Engine;
  /**
   * The engine's handle really closes (SQLite's close, with its checkpoint)
   * only once its statements are collected, in finalizers run when the event
   * loop turns (libsql's). The replay then folds the WAL into the file before
   * closing, as adapter-libsql's close does; its caller lets the loop turn.
   */
  readonly closesLate?: boolean;
  /** Called before each write transaction is replayed (each BEGIN IMMEDIATE): work done beside the statements. */
  readonly beforeWrite?: () => void;
}

/**
 * Replays one connection's calls on `file` (better-sqlite3 unless `engine`
 * says otherwise): the handle is opened as adapter-node opens it (foreign
 * keys on), each distinct SQL text is prepared once, and reads are run to
 * completion.
 */
export function replay(
  file: string,
  calls: readonly Recorded[],
  { created, engine = Database, closesLate = false, beforeWrite }: ReplayOptions = {},
): void {
  if (created !== undefined) createWhole(file, created);
  const db = openReplay(file, undefined, engine);
  try {
    const run = replayer(db, beforeWrite);
    for (const call of calls) run(call);
    if (closesLate) db.exec("PRAGMA wal_checkpoint(TRUNCATE)");
  } finally {
    db.close();
  }
}

/**
 * Creates `file` from a staged connection's calls as adapter-node creates a
 * run whole: the calls replayed on an in-memory handle, its image written at
 * `file` (`writeWhole`).
 */
export function createWhole(file: string, calls: readonly Recorded[]): void {
  const memory = openReplay(":memory:");
  let image: Uint8Array;
  try {
    const run = replayer(memory);
    for (const call of calls) run(call);
    image = memory.serialize();
  } finally {
    memory.close();
  }
  writeWhole(file, image);
}

/**
 * A new database's image (an in-memory handle's `serialize()`) made the file
 * at `file` by hand, as adapter-node publishes a staged run: marked WAL,
 * written beside the file, synced, linked into place (fails if `file`
 * exists), the staging name removed.
 */
export function writeWhole(file: string, image: Uint8Array): void {
  // The header's read and write versions: 2 is WAL, so the first open need not switch.
  image[18] = 2;
  image[19] = 2;
  const staging = `${file}.creating`;
  const fd = openSync(staging, "wx");
  try {
    writeSync(fd, image);
    fsyncSync(fd);
  } finally {
    closeSync(fd);
  }
  linkSync(staging, file);
  rmSync(staging);
}

/** What the calls `[from, to)` of a recording wrote to the WAL. */
export interface WalCount {
  /** WAL frames appended by those calls: one per page written by each commit. */
  readonly frames: number;
  /** Statements SQLite ran for them (better-sqlite3's trace; a script's statements each count). */
  readonly statements: number;
  readonly pageSize: number;
  /** Frames per table or index (dbstat's names; "free" for a page no object holds). */
  readonly byObject: Readonly<Record<string, number>>;
}

/**
 * Replays a recording on a fresh `file` with automatic checkpoints off, so the
 * WAL only grows: every page a commit writes is one frame of 24 + page_size
 * bytes after the 32-byte WAL header. The WAL's size before call `from` and
 * after call `to` gives the frames those calls wrote, exactly. `created`: as
 * for `replay`.
 */
export function countWal(
  file: string,
  calls: readonly Recorded[],
  from: number,
  to: number,
  created?: readonly Recorded[],
): WalCount {
  if (created !== undefined) createWhole(file, created);
  let traced = 0;
  const db = openReplay(file, () => traced++);
  try {
    db.pragma("wal_autocheckpoint = 0");
    const run = replayer(db);
    for (const call of calls.slice(0, from)) run(call);
    const pageSize = Number(db.pragma("page_size", { simple: true }));
    const before = walSize(file);
    traced = 0;
    for (const call of calls.slice(from, to)) run(call);
    const statements = traced;
    const frames = framesBetween(before, walSize(file), pageSize);
    const byObject = framesByObject(db, walPages(file, before, pageSize));
    return { frames, statements, pageSize, byObject };
  } finally {
    db.close();
  }
}

/** Frames appended to a WAL that grew from `before` to `after` bytes (0 = no WAL yet). */
export function framesBetween(before: number, after: number, pageSize: number): number {
  const header = 32;
  const frame = 24 + pageSize;
  const start = before === 0 ? header : before;
  const bytes = after - start;
  if (bytes % frame !== 0)
    throw new Error(`WAL grew by ${bytes} bytes, not whole frames of ${frame}`);
  return bytes / frame;
}

/**
 * The page number of every frame appended to a WAL after its first `before`
 * bytes, read header by header (a peer's WAL can pass 2 GiB, more than one
 * Buffer holds).
 */
export function walPages(file: string, before: number, pageSize: number): number[] {
  const frame = 24 + pageSize;
  const header = Buffer.alloc(4);
  const pages: number[] = [];
  const fd = openSync(`${file}-wal`, "r");
  try {
    const length = fstatSync(fd).size;
    for (let at = Math.max(before, 32); at + frame <= length; at += frame) {
      readSync(fd, header, 0, 4, at);
      pages.push(header.readUInt32BE(0));
    }
  } finally {
    closeSync(fd);
  }
  return pages;
}

/** How many of `pages` belong to each table or index, by the database's current page map. */
export function framesByObject(
  db: Database.Database,
  pages: readonly number[],
): Record<string, number> {
  const owner = new Map<number, string>();
  const rows = db.prepare("SELECT name, pageno FROM dbstat").raw().all() as [
    string,
    number | bigint,
  ][];
  for (const [name, pageno] of rows) owner.set(Number(pageno), name);
  const counts: Record<string, number> = {};
  for (const page of pages) {
    const name = owner.get(page) ?? "free";
    counts[name] = (counts[name] ?? 0) + 1;
  }
  return counts;
}

export function walSize(file: string): number {
  try {
    return statSync(`${file}-wal`).size;
  } catch {
    return 0;
  }
}

function openReplay(
  file: string,
  trace?: () => void,
  engine: Engine = Database,
): Database.Database {
  const db = new engine(file, trace === undefined ? {} : { verbose: trace });
  db.defaultSafeIntegers(true);
  db.pragma("foreign_keys = ON");
  return db;
}

function replayer(db: Database.Database, beforeWrite?: () => void): (call: Recorded) => void {
  const statements = new Map<string, Database.Statement>();
  return (call) => {
    if (call.kind === "script") {
      db.exec(call.sql);
      return;
    }
    if (beforeWrite !== undefined && call.sql === BEGIN.immediate) beforeWrite();
    let statement = statements.get(call.sql);
    if (statement === undefined) {
      statement = db.prepare(call.sql);
      statements.set(call.sql, statement);
    }
    if (statement.reader) statement.all(...call.params);
    else statement.run(...call.params);
  };
}
