/**
 * Helpers shared by the run-database families (docs/file-format.md): run stores closed
 * when their test ends, raw connections for crafting and inspecting files,
 * the file's fingerprint (SHA-256 plus its directory's listing), the v1 base
 * file the bad-file corpus is derived from, and the parent's side of the
 * run-peer child process.
 */
import { createHash } from "node:crypto";
import { existsSync } from "node:fs";
import { copyFile, readdir, readFile } from "node:fs/promises";
import { basename, dirname, join } from "node:path";
import {
  isRunledgerError,
  type RunCreate,
  type RunLease,
  RunStore,
  type RunStoreOptions,
} from "@runledger/core";
import { type LiveSchema, readLiveSchema, serializeSchema } from "@runledger/core/engine";
import { type OpenOptions, type Row, sha256Hex } from "@runledger/core/port";
import { expect, onTestFinished } from "vitest";
import type { PeerReport, PeerRequest } from "../child/run-peer-protocol.js";
import { type Fixtures, oneShot } from "../fixtures.js";

/** The identity every family's runs are created with, unless a test needs another. */
export const CREATE: RunCreate = {
  workflowId: "conformance-workflow",
  runId: "run-1",
  definition: { steps: ["fetch", "build"], retries: 2 },
};

/** How long a run-peer process may take from spawn to exit. */
const PEER_TIMEOUT_MS = 60_000;

/** A run store on the subject's driver (or the one given), closed when the current test ends. */
export function runStore(fx: Fixtures, options: Partial<RunStoreOptions> = {}): RunStore {
  const store = new RunStore({ driver: fx.driver(), busyTimeoutMs: 2_000, ...options });
  onTestFinished(() => store.close());
  return store;
}

/** A new run at a fresh location (created, then everything closed again). */
export async function createdRun(
  fx: Fixtures,
  options: Partial<RunStoreOptions> = {},
  location = fx.location(),
): Promise<string> {
  const store = new RunStore({ driver: fx.driver(), ...options });
  try {
    const lease = await store.open(location, { create: CREATE });
    await lease.release();
  } finally {
    await store.close();
  }
  return location;
}

/** Opens a run on a store of its own; both are closed when the test ends. */
export async function openRun(
  fx: Fixtures,
  location: string,
  options: Partial<RunStoreOptions> = {},
): Promise<RunLease> {
  const lease = await runStore(fx, options).open(location, { create: CREATE });
  onTestFinished(() => lease.release());
  return lease;
}

/**
 * Runs statements on one raw driver connection (no core in between), closes it
 * and returns each statement's rows. Never creates a file unless asked.
 */
export async function raw(
  fx: Fixtures,
  location: string,
  statements: readonly string[],
  options: Partial<OpenOptions> = {},
): Promise<Row[][]> {
  const connection = await fx.driver().open(location, {
    create: false,
    readOnly: false,
    busyTimeoutMs: 2_000,
    ...options,
  });
  try {
    const results: Row[][] = [];
    for (const sql of statements) results.push((await connection.execute(sql)).rows);
    return results;
  } finally {
    await connection.close();
  }
}

/** The first row of one statement run on its own raw connection. */
export async function firstRow(fx: Fixtures, location: string, sql: string): Promise<Row> {
  const [rows] = await raw(fx, location, [sql]);
  const row = rows?.[0];
  if (row === undefined) throw new Error(`no row from ${sql}`);
  return row;
}

/** A pragma's value, read on its own raw connection (numbers as numbers, text lower-cased). */
export async function pragma(fx: Fixtures, location: string, name: string): Promise<unknown> {
  const value = Object.values(await firstRow(fx, location, `PRAGMA ${name}`))[0];
  return typeof value === "bigint"
    ? Number(value)
    : typeof value === "string"
      ? value.toLowerCase()
      : value;
}

/** A live schema, with the workspace encoding its identity row records (run databases only). */
export interface RecordedSchema extends LiveSchema {
  readonly encoding?: string;
}

/** What a database holds, read on a read-only raw connection. */
export async function liveSchema(fx: Fixtures, location: string): Promise<RecordedSchema> {
  const connection = await fx.driver().open(location, {
    create: false,
    readOnly: true,
    busyTimeoutMs: 2_000,
  });
  try {
    const live = await readLiveSchema(connection);
    const identity = live.objects.find((object) => object.name === "runledger_identity");
    if (identity?.sql?.includes("encoding") !== true) return live;
    const { rows } = await connection.execute("SELECT encoding FROM runledger_identity");
    const encoding = rows[0]?.encoding;
    return typeof encoding === "string" ? { ...live, encoding } : live;
  } finally {
    await connection.close();
  }
}

/**
 * SHA-256 of a live schema's canonical serialization, with the encoding the
 * file records where it records one: what SCHEMA_V1_DIGEST must equal.
 */
export function schemaDigest(live: RecordedSchema): string {
  return sha256Hex(
    serializeSchema(live.applicationId, live.userVersion, live.objects, live.encoding),
  );
}

/** A file's identity for "left exactly as found": its bytes' SHA-256 and the files named after it beside it. */
export interface FileFingerprint {
  readonly sha256: string | null;
  readonly size: number | null;
  readonly listing: readonly string[];
}

export async function fingerprint(location: string): Promise<FileFingerprint> {
  // The location and every file SQLite names after it (-wal, -shm, -journal).
  // Only those: the directory is shared with other tests' files, whose
  // connections may still be closing (and removing their own -wal/-shm).
  const name = basename(location);
  const listing = (await readdir(dirname(location)))
    .filter((entry) => entry === name || entry.startsWith(`${name}-`))
    .sort();
  if (!existsSync(location)) return { sha256: null, size: null, listing };
  const bytes = await readFile(location);
  return {
    sha256: createHash("sha256").update(bytes).digest("hex"),
    size: bytes.byteLength,
    listing,
  };
}

/** Deterministic noise: a SHA-256 chain over a seed, `length` bytes long. */
export function noise(seed: string, length: number): Buffer {
  const out = Buffer.alloc(length);
  let block = createHash("sha256").update(seed).digest();
  for (let at = 0; at < length; at += block.length) {
    block.copy(out, at);
    block = createHash("sha256").update(block).digest();
  }
  return out;
}

/** Whether an error is (or carries, as cause or cleanup failure) a fault the injector fired. */
export function carriesInjected(error: unknown, depth = 0): boolean {
  if (depth > 8 || error === null || typeof error !== "object") return false;
  if (isRunledgerError(error) && error.details?.injected === true) return true;
  const details = (error as { details?: Record<string, unknown> }).details;
  return (
    carriesInjected((error as { cause?: unknown }).cause, depth + 1) ||
    carriesInjected(details?.failure, depth + 1) ||
    carriesInjected(details?.cleanupFailure, depth + 1)
  );
}

/**
 * The v1 run every derived fixture starts from, made once per suite: a real
 * run with two events, created by the subject's own driver in a child
 * process when the subject has one (so no handle of this process has ever
 * touched it), then switched to rollback-journal mode on a raw connection so
 * that it is one self-contained file. Each fixture is a copy of it.
 */
export function v1BaseFile(fx: Fixtures): () => Promise<string> {
  let made: Promise<string> | undefined;
  return () => {
    made ??= (async () => {
      const location = join(await fx.scratchDirectory(), "base.sqlite");
      const appends = [{ record: { step: "fetch" } }, { record: { step: "build" }, key: "b" }];
      const child = fx.has("childProcesses") ? fx.subject.child : undefined;
      if (child !== undefined) {
        await runPeer(child, { location, create: CREATE, appends });
      } else {
        const store = new RunStore({ driver: fx.driver() });
        try {
          const lease = await store.open(location, { create: CREATE });
          await lease.transact(async (tx) => {
            for (const { record, key } of appends) {
              await tx.journal.append(record, key === undefined ? {} : { key });
            }
          });
          await lease.release();
        } finally {
          await store.close();
        }
      }
      const [mode] = await raw(fx, location, ["PRAGMA journal_mode = DELETE"]);
      expect(String(mode?.[0]?.journal_mode).toLowerCase()).toBe("delete");
      expect((await fingerprint(location)).listing).toEqual([basename(location)]);
      return location;
    })();
    return made;
  };
}

/** A copy of `source` as `name` in a new scratch directory of its own. */
export async function copyInto(fx: Fixtures, source: string, name = "run.sqlite"): Promise<string> {
  const location = join(await fx.scratchDirectory(), name);
  await copyFile(source, location);
  return location;
}

/**
 * Runs one run-peer process to completion with a peer's driver: it works on
 * one run database, reports and exits (holding nothing) before this returns.
 */
export const runPeer = oneShot<PeerRequest, PeerReport>(
  { file: "run-peer", name: "run-peer" },
  PEER_TIMEOUT_MS,
);
