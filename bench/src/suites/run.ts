/**
 * The run database (issue 4), three figures, each adapter:
 *
 * 1. open — recognition latency: `RunStore.open(file)` + `release()` (driver
 *    open, the pragmas and every `sqlite_schema` row compared with the
 *    manifest, the singleton rows, WAL/durability, close) against the raw
 *    driver opening the file, reading `application_id`, `user_version` and
 *    `sqlite_schema`, and closing. On an empty run and on a run of ≥ 500 MB of
 *    journal and blobs, built once per bench run.
 * 2. append per transaction — `lease.transact(tx => tx.journal.append(record))`
 *    against the raw driver inserting the same journal row (same v1 file, same
 *    constraints and trigger) in its own BEGIN IMMEDIATE … COMMIT.
 * 3. appends in one transaction — 10,000 `tx.journal.append` in one
 *    `lease.transact` against a raw prepared INSERT loop in one transaction.
 */
import { createHash, randomBytes } from "node:crypto";
import { pathToFileURL } from "node:url";
import { createClient } from "@libsql/client";
import { libsqlDriver } from "@runledger/adapter-libsql";
import { nodeDriver } from "@runledger/adapter-node";
import { APPLICATION_ID, type JsonObject, RunStore, SCHEMA_V1 } from "@runledger/core";
import { WORKSPACE_ENCODING_V1 } from "@runledger/core/engine";
import type { Driver } from "@runledger/core/port";
import { timeOrderedId } from "@runledger/core/port";
import Database from "better-sqlite3";
import {
  type Contender,
  databaseSize,
  formatMib,
  formatRate,
  interleave,
  pairedRatio,
  type Sample,
  type Suite,
  type SuiteContext,
  spread,
  type Table,
  type Timing,
  time,
} from "../harness.js";
import { writeWhole } from "../replay.js";

const CREATE = { workflowId: "bench", runId: "run-1" } as const;

/** About 100 bytes of JSON once serialized, different for every event. */
function record(seq: number): JsonObject {
  return {
    kind: "step.completed",
    seq,
    step: "fetch-invoice",
    attempt: 1,
    at: 1767225600000 + seq,
    ok: true,
  };
}

const INSERT_EVENT = `INSERT INTO journal (sequence, event_id, idempotency_key, record, root_id, written_at, digest)
VALUES (?, ?, NULL, ?, ?, ?, ?)`;

/**
 * The raw sides chain their events as the journal does (each row's digest
 * the SHA-256 of the one before it and its own record: one hash a row, as
 * core's chain costs; not core's exact input, which no raw side reads back).
 */
function chain(): (text: string) => Buffer {
  let previous = Buffer.alloc(32);
  return (text) => {
    previous = createHash("sha256").update(previous).update(text).digest();
    return previous;
  };
}
const CURRENT_ROOT = "SELECT root_id FROM workspace_current";
const SCHEMA_ROWS = "SELECT type, name, tbl_name, sql FROM sqlite_schema ORDER BY rowid";

/**
 * @libsql/client frees a statement, and really closes a connection (SQLite's
 * close, with its WAL checkpoint), only in a Node-API finalizer that runs when
 * the event loop turns (see adapter-libsql's finalizers.ts). A timed loop that
 * only awaits promises never lets it turn, so it would leave that work, and
 * the memory, until after its timing. So the raw libsql sides let the event
 * loop turn as often as adapter-libsql does: once per 256 statements it
 * counts — an open counts three (recognition, singleton rows, the close), an
 * append one.
 */
function turnEvery(calls: number): () => Promise<void> | undefined {
  let count = 0;
  return () => {
    if (++count % calls !== 0) return undefined;
    return new Promise<void>((resolve) => setImmediate(resolve));
  };
}

const ADAPTER_LIBSQL_STATEMENTS_PER_TURN = 256;
const LIBSQL_OPENS_PER_TURN = Math.round(ADAPTER_LIBSQL_STATEMENTS_PER_TURN / 3);
const libsqlOpenTurn = turnEvery(LIBSQL_OPENS_PER_TURN);

/** What the raw side of the append figures does, per driver. */
interface RawJournal {
  /** One INSERT of the next journal row per BEGIN IMMEDIATE … COMMIT. */
  perTransaction(from: number, count: number): Promise<void>;
  /** `count` INSERTs in one BEGIN IMMEDIATE … COMMIT. */
  oneTransaction(from: number, count: number): Promise<void>;
  close(): Promise<void>;
}

interface Adapter {
  readonly name: string;
  readonly driver: () => Driver;
  /** Open, read the two pragmas and sqlite_schema, close. */
  rawOpen(file: string): Promise<void>;
  rawJournal(file: string): Promise<RawJournal>;
  readonly appendGoal: number;
}

const ADAPTERS: readonly Adapter[] = [
  {
    name: "adapter-node",
    driver: () => nodeDriver(),
    async rawOpen(file) {
      const db = new Database(file, { fileMustExist: true });
      db.pragma("application_id", { simple: true });
      db.pragma("user_version", { simple: true });
      db.prepare(SCHEMA_ROWS).all();
      db.close();
    },
    async rawJournal(file) {
      const db = new Database(file, { fileMustExist: true });
      db.pragma("journal_mode = WAL");
      db.pragma("synchronous = NORMAL");
      db.pragma("foreign_keys = ON");
      const root = db.prepare(CURRENT_ROOT).pluck().get() as Buffer;
      const begin = db.prepare("BEGIN IMMEDIATE");
      const insert = db.prepare(INSERT_EVENT);
      const commit = db.prepare("COMMIT");
      const digest = chain();
      const row = (seq: number) => {
        const text = JSON.stringify(record(seq));
        insert.run(seq, timeOrderedId(), text, root, Date.now(), digest(text));
      };
      return {
        async perTransaction(from, count) {
          for (let seq = from; seq < from + count; seq++) {
            begin.run();
            row(seq);
            commit.run();
          }
        },
        async oneTransaction(from, count) {
          begin.run();
          for (let seq = from; seq < from + count; seq++) row(seq);
          commit.run();
        },
        async close() {
          db.close();
        },
      };
    },
    appendGoal: 0.6,
  },
  {
    name: "adapter-libsql",
    driver: () => libsqlDriver(),
    async rawOpen(file) {
      const client = createClient({ url: pathToFileURL(file).href, intMode: "bigint" });
      await client.execute("PRAGMA application_id");
      await client.execute("PRAGMA user_version");
      await client.execute(SCHEMA_ROWS);
      client.close();
      await libsqlOpenTurn();
    },
    async rawJournal(file) {
      const client = createClient({ url: pathToFileURL(file).href, intMode: "bigint" });
      await client.execute("PRAGMA journal_mode = WAL");
      await client.execute("PRAGMA synchronous = NORMAL");
      await client.execute("PRAGMA foreign_keys = ON");
      const root = (await client.execute(CURRENT_ROOT)).rows[0]?.[0] as ArrayBuffer;
      const turn = turnEvery(ADAPTER_LIBSQL_STATEMENTS_PER_TURN);
      const digest = chain();
      const args = (seq: number) => {
        const text = JSON.stringify(record(seq));
        return [seq, timeOrderedId(), text, root, Date.now(), digest(text)];
      };
      return {
        async perTransaction(from, count) {
          for (let seq = from; seq < from + count; seq++) {
            const tx = await client.transaction("write");
            await tx.execute({ sql: INSERT_EVENT, args: args(seq) });
            await tx.commit();
            await turn();
          }
        },
        async oneTransaction(from, count) {
          const tx = await client.transaction("write");
          for (let seq = from; seq < from + count; seq++) {
            await tx.execute({ sql: INSERT_EVENT, args: args(seq) });
            await turn();
          }
          await tx.commit();
        },
        async close() {
          client.close();
        },
      };
    },
    appendGoal: 0.8,
  },
];

/** Creates an empty run (adapter-node), untimed. */
async function createRun(file: string): Promise<void> {
  const store = new RunStore({ driver: nodeDriver() });
  try {
    await (await store.open(file, { create: CREATE })).release();
  } finally {
    await store.close();
  }
}

interface BigRun {
  readonly files: number;
  readonly events: number;
  readonly bytes: number;
  readonly buildMs: number;
}

/**
 * The large run: `files` workspace files of 1 MiB random bytes (no two chunks
 * alike, so nothing deduplicates), 10 per `apply` transaction, then `events`
 * journal appends, 10,000 per transaction. Built with adapter-node.
 */
async function buildBigRun(file: string, files: number, events: number): Promise<BigRun> {
  const started = performance.now();
  const store = new RunStore({ driver: nodeDriver() });
  try {
    const lease = await store.open(file, { create: CREATE });
    for (let first = 0; first < files; first += 10) {
      const put: Record<string, Uint8Array> = {};
      for (let i = first; i < Math.min(first + 10, files); i++) {
        put[`data/${String(i).padStart(4, "0")}.bin`] = randomBytes(1 << 20);
      }
      await lease.transact((tx) =>
        tx.workspace.apply({ put }, { event: { kind: "data.written", first } }),
      );
    }
    for (let first = 0; first < events; first += 10_000) {
      await lease.transact(async (tx) => {
        for (let seq = first; seq < Math.min(first + 10_000, events); seq++) {
          await tx.journal.append(record(seq));
        }
      });
    }
    await lease.release();
  } finally {
    await store.close();
  }
  return {
    files,
    events,
    bytes: await databaseSize(file),
    buildMs: performance.now() - started,
  };
}

/** Runs `body` `count` times against the prebuilt `file` (the harness's fresh file is unused). */
function opens(label: string, count: number, body: () => Promise<void>): Contender {
  return {
    label,
    run: () =>
      time(count, async () => {
        for (let i = 0; i < count; i++) await body();
      }),
  };
}

async function openTable(
  context: SuiteContext,
  runs: readonly { readonly name: string; readonly file: string }[],
  cases: unknown[],
): Promise<Table> {
  // Many short rounds: an open takes well under a millisecond, and the
  // paired ratio of many neighbouring rounds is steadier than few long ones.
  // Measured in the steady state of a process that keeps opening runs: no
  // forced collection between rounds (it would make the longer JavaScript
  // path cold again each time), after untimed rounds enough for V8 to
  // compile both paths (an open still got faster up to ~2,000 opens).
  const count = context.quick ? 100 : 300;
  const rounds = context.quick ? context.runs : 15;
  const warmupRuns = context.quick ? 1 : 8;
  const lines: string[][] = [];
  for (const adapter of ADAPTERS) {
    // Every size in the same rounds, raw and RunStore side by side, so that
    // both ratios — RunStore over raw, and large over empty — compare runs
    // made at the same speed of the machine.
    const store = new RunStore({ driver: adapter.driver() });
    const samples = await interleave(
      context,
      runs.flatMap((run) => [
        opens(`${adapter.name} raw, ${run.name}`, count, () => adapter.rawOpen(run.file)),
        opens(`${adapter.name} RunStore.open, ${run.name}`, count, async () => {
          await (await store.open(run.file)).release();
        }),
      ]),
      { runs: rounds, collect: false, warmupRuns },
    );
    await store.close();
    const first = samples[1] as Sample;
    runs.forEach((run, index) => {
      const raw = samples[2 * index] as Sample;
      const runledger = samples[2 * index + 1] as Sample;
      // Time per open, RunStore over raw: raw's rate over RunStore's, round by round.
      const ratio = pairedRatio(raw, runledger);
      const overFirst = index > 0 ? pairedRatio(first, runledger) : undefined;
      cases.push({
        adapter: adapter.name,
        run: run.name,
        count,
        rounds,
        raw,
        runledger,
        ratio,
        overFirst,
      });
      lines.push([
        `${adapter.name}, ${run.name}`,
        (1e6 / raw.median).toFixed(0),
        (1e6 / runledger.median).toFixed(0),
        `${ratio.toFixed(2)}×`,
        `≤ 1.5× ${ratio <= 1.5 ? "met" : "MISSED"}`,
        overFirst === undefined ? "" : `${overFirst.toFixed(2)}×`,
        `±${(spread(raw) * 100).toFixed(1)}% / ±${(spread(runledger) * 100).toFixed(1)}%`,
      ]);
    });
  }
  return {
    title: `open (recognition) latency, steady state: ${count} open+close per run, ${warmupRuns} untimed and ${rounds} timed rounds of every case, no forced collection between them (µs per open: medians; ratios: medians of the rounds' paired ratios)`,
    headers: ["adapter, run", "raw", "RunStore", "RunStore/raw", "goal", "large/empty", "spread"],
    rows: lines,
  };
}

/** The v1 schema's SQL as one script, for the raw side of the creation race. */
const RUN_SCHEMA_SQL = SCHEMA_V1.objects
  .flatMap((object) => (object.sql === null ? [] : [object.sql]))
  .join(";\n");

/** The raw side's creating transaction, on a file or in memory. */
function rawCreation(db: Database.Database): void {
  db.exec("BEGIN IMMEDIATE");
  rawSharedPart(db);
  rawOwnPart(db);
  db.exec("COMMIT");
}

/** What every run's file holds alike: application_id, the schema, the identity row. */
function rawSharedPart(db: Database.Database): void {
  db.exec(`PRAGMA application_id = ${APPLICATION_ID}`);
  db.exec(RUN_SCHEMA_SQL);
  db.prepare(
    "INSERT INTO runledger_identity (application_id, format, version, encoding) VALUES (?, 'runledger run database', ?, ?)",
  ).run(APPLICATION_ID, SCHEMA_V1.userVersion, WORKSPACE_ENCODING_V1);
}

/** What is one run's own: its row, then user_version. */
function rawOwnPart(db: Database.Database): void {
  db.prepare(
    "INSERT INTO run (singleton, workflow_id, run_id, definition, status, created_at, updated_at) VALUES (1, ?, ?, NULL, 'running', ?, ?)",
  ).run(CREATE.workflowId, CREATE.runId, Date.now(), Date.now());
  db.exec(`PRAGMA user_version = ${SCHEMA_V1.userVersion}`);
}

/** A file written whole, then opened as a run's first open reads it (the log and schema) and closed. */
function placeAndOpen(file: string, image: Uint8Array): void {
  writeWhole(file, image);
  const db = new Database(file);
  db.pragma("synchronous = NORMAL");
  db.prepare("SELECT count(*) FROM sqlite_schema").get();
  db.close();
}

/**
 * Creating a run: `store.open(file, { create })` + `release()` on a new file
 * (adapter-node places it whole from the staged database its store keeps),
 * against better-sqlite3 doing the same work by hand three ways: in place —
 * WAL and NORMAL, the v1 schema in one script, its identity and run rows (not
 * the empty root's node row), user_version, in one transaction, then closing
 * it; whole — the same transaction in memory, serialized, written beside the
 * file, synced, linked, then the file opened (its first read: the log and
 * schema) and closed; and from a kept template, the floor — the shared part
 * built in memory once, each run's row and user_version in a transaction on
 * it, serialized, rolled back, then placed and opened as whole. adapter-node
 * only (issue 32's goal: a creation in about a millisecond).
 */
async function createTable(context: SuiteContext, cases: unknown[]): Promise<Table> {
  const count = context.quick ? 20 : 100;
  const rounds = context.quick ? context.runs : 9;
  const store = new RunStore({ driver: nodeDriver() });
  let next = 0;
  const base = context.freshFile();
  const fresh = () => `${base}-${++next}.db`;
  let template: Database.Database | undefined;
  const samples = await interleave(
    context,
    [
      opens("raw better-sqlite3 create", count, async () => {
        const db = new Database(fresh());
        db.pragma("journal_mode = WAL");
        db.pragma("synchronous = NORMAL");
        rawCreation(db);
        db.close();
      }),
      opens("raw better-sqlite3 create whole", count, async () => {
        const memory = new Database(":memory:");
        rawCreation(memory);
        const image = memory.serialize();
        memory.close();
        placeAndOpen(fresh(), image);
      }),
      opens("raw better-sqlite3 create from a kept template", count, async () => {
        template ??= keptTemplate();
        template.exec("BEGIN IMMEDIATE");
        rawOwnPart(template);
        const image = template.serialize();
        template.exec("ROLLBACK");
        placeAndOpen(fresh(), image);
      }),
      opens("RunStore.open(create) + release", count, async () => {
        await (await store.open(fresh(), { create: CREATE })).release();
      }),
    ],
    { runs: rounds, collect: false, warmupRuns: 1 },
  );
  await store.close();
  template?.close();
  const [raw, whole, kept, runledger] = samples as [Sample, Sample, Sample, Sample];
  const ms = (sample: Sample) => 1000 / sample.median;
  cases.push({ count, rounds, raw, whole, kept, runledger });
  return {
    title: `creating a run on a new file, adapter-node: ${count} a round, ${rounds} timed rounds (ms per creation: medians)`,
    headers: ["case", "ms a creation", "vs raw", "goal"],
    rows: [
      [
        "raw better-sqlite3 (same schema and rows, WAL, one transaction, close)",
        ms(raw).toFixed(2),
        "1.00×",
        "",
      ],
      [
        "raw better-sqlite3 built in memory, written whole (synced, linked), opened and closed",
        ms(whole).toFixed(2),
        `${(ms(whole) / ms(raw)).toFixed(2)}×`,
        "",
      ],
      [
        "raw better-sqlite3 from a kept template (schema built once; rows, copy, rollback), written whole, opened and closed",
        ms(kept).toFixed(2),
        `${(ms(kept) / ms(raw)).toFixed(2)}×`,
        "",
      ],
      [
        "RunStore.open(create) + release",
        ms(runledger).toFixed(2),
        `${(ms(runledger) / ms(raw)).toFixed(2)}×`,
        `≤ 1.5 ms ${ms(runledger) <= 1.5 ? "met" : "MISSED"}`,
      ],
    ],
  };
}

type Shape = "perTransaction" | "oneTransaction";

/** A fresh run per timed run: warm-up appends, then the timed ones; the row count is checked. */
function appendContenders(
  adapter: Adapter,
  shape: Shape,
  count: number,
  warmup: number,
): Contender[] {
  const raw: Contender = {
    label: `${adapter.name} raw INSERT`,
    async run(file) {
      await createRun(file);
      const journal = await adapter.rawJournal(file);
      try {
        await journal[shape](1, warmup);
        return await time(count, () => journal[shape](1 + warmup, count));
      } finally {
        await journal.close();
        await checkEvents(file, warmup + count);
      }
    },
  };
  const runledger: Contender = {
    label: `${adapter.name} journal.append`,
    async run(file): Promise<Timing> {
      const store = new RunStore({ driver: adapter.driver() });
      try {
        const lease = await store.open(file, { create: CREATE });
        const append =
          shape === "perTransaction"
            ? async (from: number, n: number) => {
                for (let seq = from; seq < from + n; seq++) {
                  await lease.transact((tx) => tx.journal.append(record(seq)));
                }
              }
            : (from: number, n: number) =>
                lease.transact(async (tx) => {
                  for (let seq = from; seq < from + n; seq++) await tx.journal.append(record(seq));
                });
        await append(1, warmup);
        const timing = await time(count, () => append(1 + warmup, count));
        await lease.release();
        return timing;
      } finally {
        await store.close();
        await checkEvents(file, warmup + count);
      }
    },
  };
  return [raw, runledger];
}

async function checkEvents(file: string, expected: number): Promise<void> {
  const db = new Database(file, { readonly: true, fileMustExist: true });
  try {
    const settings = {
      journalMode: db.pragma("journal_mode", { simple: true }),
      events: db.prepare("SELECT count(*) FROM journal").pluck().get(),
    };
    if (settings.journalMode !== "wal" || settings.events !== expected) {
      throw new Error(`expected ${expected} events in WAL mode, found ${JSON.stringify(settings)}`);
    }
  } finally {
    db.close();
  }
}

async function appendTable(context: SuiteContext, shape: Shape, cases: unknown[]): Promise<Table> {
  const one = shape === "oneTransaction";
  const count = context.quick ? 2_000 : 10_000;
  const warmup = one ? 1_000 : 500;
  const lines: string[][] = [];
  for (const adapter of ADAPTERS) {
    const [raw, runledger] = (await interleave(
      context,
      appendContenders(adapter, shape, count, warmup),
      // Steady state, as for opens: no forced collection between runs.
      { runs: context.quick ? context.runs : 11, collect: false },
    )) as [Sample, Sample];
    const goal = one ? 0.5 : adapter.appendGoal;
    const ratio = pairedRatio(runledger, raw);
    cases.push({ adapter: adapter.name, shape, count, warmup, raw, runledger, ratio, goal });
    lines.push([
      adapter.name,
      formatRate(raw.median),
      formatRate(runledger.median),
      `${ratio.toFixed(2)}×`,
      `≥ ${goal}× ${ratio >= goal ? "met" : "MISSED"}`,
      `±${(spread(raw) * 100).toFixed(1)}% / ±${(spread(runledger) * 100).toFixed(1)}%`,
    ]);
  }
  return {
    title: one
      ? `${count.toLocaleString("en-US")} journal appends in one transaction, no forced collection between runs (events/s: medians; ratio: median of the runs' paired ratios)`
      : `one journal append per transaction, ${count.toLocaleString("en-US")} timed, no forced collection between runs (tx/s: medians; ratio: median of the runs' paired ratios)`,
    headers: ["adapter", "raw INSERT", "journal.append", "append/raw", "goal", "spread"],
    rows: lines,
  };
}

export const runSuite: Suite = {
  name: "run",
  summary:
    "run open (recognition) latency, journal append per transaction and in one, creating a run",
  async run(context) {
    // BENCH_RUN=create: only the creation table (no large run to build first).
    if (process.env.BENCH_RUN === "create") {
      const create: unknown[] = [];
      return { notes: [], tables: [await createTable(context, create)], data: { create } };
    }
    const files = context.quick ? 50 : 500;
    const events = context.quick ? 20_000 : 200_000;
    const empty = context.freshFile();
    await createRun(empty);
    const bigFile = context.freshFile();
    const big = await buildBigRun(bigFile, files, events);
    const open: unknown[] = [];
    const append: unknown[] = [];
    const create: unknown[] = [];
    const tables = [
      await openTable(
        context,
        [
          { name: `empty (${formatMib(await databaseSize(empty))} MiB)`, file: empty },
          { name: `large (${formatMib(big.bytes)} MiB)`, file: bigFile },
        ],
        open,
      ),
      await appendTable(context, "perTransaction", append),
      await appendTable(context, "oneTransaction", append),
      await createTable(context, create),
    ];
    return {
      notes: [
        "durability: journal_mode=WAL, synchronous=NORMAL on every writing side (runledger's default; the raw sides set it; each append run checks WAL and the event count after)",
        `large run: ${files} workspace files of 1 MiB random bytes (10 per apply) + ${events.toLocaleString("en-US")} journal events (10,000 per transaction), ${formatMib(big.bytes)} MiB on disk, built with adapter-node in ${(big.buildMs / 1000).toFixed(1)} s`,
        "open: raw = open the file, PRAGMA application_id, PRAGMA user_version, SELECT … FROM sqlite_schema, close; RunStore = store.open(file) (canonical path, foreign keys, recognition in one statement, singleton rows, durability; WAL already on) + release (closes the connection)",
        "append: both sides write the same journal row into the same v1 run file (constraints and the gap-free trigger; the current root from the view workspace_current; event ids from core's default generator, time-ordered UUIDs); raw computes the sequence in JS and reads the current root once; runledger's append binds the sequence after the last one its lease saw and that event's root (the gap-free trigger refuses a stale guess, and the append then names both in the statement)",
        `each run: fresh file where it writes; untimed rounds first (opens: ${context.quick ? 1 : 8}, appends: 1), then raw and runledger back to back in each timed round (opens: ${context.quick ? context.runs : 15}, appends: ${context.quick ? context.runs : 11}); no forced collection between rounds; each ratio is the median of the rounds' paired ratios`,
        `the raw libsql sides let the event loop turn as often as adapter-libsql does (once per ${LIBSQL_OPENS_PER_TURN} opens, per ${ADAPTER_LIBSQL_STATEMENTS_PER_TURN} appended rows), so their statements are freed and their connections really closed inside the timing, as the adapter's are`,
      ],
      tables,
      data: { big, open, append, create },
    };
  },
};

/** An in-memory database holding what every run's file holds alike, committed: the floor's template. */
function keptTemplate(): Database.Database {
  const db = new Database(":memory:");
  db.exec("BEGIN IMMEDIATE");
  rawSharedPart(db);
  db.exec("COMMIT");
  return db;
}
