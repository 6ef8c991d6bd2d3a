/**
 * The commit log (docs/commit-log.md), three figures:
 *
 * 1. batch — one 10,000-op partition batch through `unit.commit()` against
 *    raw inserts of the same rows (the commit row, 10,000 ops, 10,000 live
 *    keys, 10,000 chunks) with the driver's own prepared statements, into a
 *    file with the same schema (COMMIT_LOG_SCHEMA_V1's SQL, indexes and
 *    triggers). The staged ops are spilled at commit, so the commit side
 *    also writes and then deletes the staging rows: that is the price of a
 *    unit that survives its process.
 * 2. catch-up — ops/s of `model.catchUp(log)` into a fresh read model, from
 *    a log of 100 commits (50 partitions, puts and tombstones).
 * 3. staging memory — peak RSS while staging 1,000,000 small ops (one op per
 *    stage() call, as a long run stages them), against 100,000: a bounded
 *    unit shows the same peak for both.
 */
import { execFile } from "node:child_process";
import { fileURLToPath, pathToFileURL } from "node:url";
import { createClient } from "@libsql/client";
import { libsqlDriver } from "@runledger/adapter-libsql";
import { nodeDriver } from "@runledger/adapter-node";
import {
  COMMIT_LOG_SCHEMA_V1,
  CommitLogStore,
  put,
  ReadModelStore,
  tombstone,
  typedChange,
} from "@runledger/core/commit-log";
import { type Driver, sha256 } from "@runledger/core/port";
import Database from "better-sqlite3";
import {
  type Contender,
  formatRate,
  interleave,
  rate,
  type Sample,
  type Suite,
  type SuiteContext,
  spread,
  type Table,
  type Timing,
  time,
} from "../harness.js";
import type { StagingFigures } from "./commit-log-staging.js";

const BATCH = 10_000;
const PARTITION = "run--bench--r1";

interface Adapter {
  readonly name: string;
  readonly driver: () => Driver;
  readonly rawLabel: string;
  readonly raw: (file: string, rows: BatchRows) => Promise<Timing>;
}

/** The rows one 10,000-op batch writes: what the raw side inserts. */
interface BatchRows {
  readonly keys: readonly string[];
  readonly contents: readonly Uint8Array[];
  readonly digests: readonly Uint8Array[];
}

function batchRows(): BatchRows {
  const keys = Array.from({ length: BATCH }, (_, i) => `snapshots/${i}.json`);
  const contents = keys.map((key, i) =>
    new TextEncoder().encode(`{"key":"${key}","step":${i},"status":"completed","ok":true}`),
  );
  return { keys, contents, digests: contents.map((bytes) => sha256(bytes)) };
}

const SCHEMA_SQL = COMMIT_LOG_SCHEMA_V1.objects
  .filter((object) => object.sql !== null)
  .map((object) => `${object.sql};`)
  .join("\n");
const INSERT_COMMIT = `INSERT INTO log_commit (commit_id, txn_id, batch, partition, sequence, intent,
  op_count, staged_at, committed_at) VALUES (1, 'txn', 0, ?, 1, 'run-snapshot.save', ?, 0, 0)`;
const INSERT_OP =
  "INSERT INTO log_op (commit_id, ordinal, kind, key, digest) VALUES (1, ?, 'put', ?, ?)";
const INSERT_LIVE = "INSERT INTO live_key (partition, key, digest, sequence) VALUES (?, ?, ?, 1)";
const INSERT_CHUNK = "INSERT INTO chunk (digest, size, data) VALUES (?, ?, ?)";

/** better-sqlite3 as its users write it: prepared statements in one transaction. */
async function rawBetterSqlite3(file: string, rows: BatchRows): Promise<Timing> {
  const db = new Database(file);
  try {
    db.pragma("journal_mode = WAL");
    db.pragma("synchronous = NORMAL");
    db.pragma("foreign_keys = ON");
    db.exec(SCHEMA_SQL);
    const commit = db.prepare(INSERT_COMMIT);
    const op = db.prepare(INSERT_OP);
    const live = db.prepare(INSERT_LIVE);
    const chunk = db.prepare(INSERT_CHUNK);
    const digests = rows.digests.map((d) => Buffer.from(d));
    const contents = rows.contents.map((c) => Buffer.from(c));
    const timing = await time(BATCH, async () => {
      db.transaction(() => {
        commit.run(PARTITION, BATCH);
        for (let i = 0; i < BATCH; i++) {
          chunk.run(digests[i], contents[i]!.byteLength, contents[i]);
          op.run(i, rows.keys[i], digests[i]);
          live.run(PARTITION, rows.keys[i], digests[i]);
        }
      }).immediate();
    });
    return timing;
  } finally {
    db.close();
  }
}

/** @libsql/client as its users write it: one write transaction, tx.execute per row. */
async function rawLibsql(file: string, rows: BatchRows): Promise<Timing> {
  const client = createClient({ url: pathToFileURL(file).href, intMode: "bigint" });
  try {
    await client.execute("PRAGMA journal_mode = WAL");
    await client.execute("PRAGMA synchronous = NORMAL");
    await client.execute("PRAGMA foreign_keys = ON");
    await client.executeMultiple(SCHEMA_SQL);
    const timing = await time(BATCH, async () => {
      const tx = await client.transaction("write");
      await tx.execute({ sql: INSERT_COMMIT, args: [PARTITION, BATCH] });
      for (let i = 0; i < BATCH; i++) {
        const digest = rows.digests[i]!;
        const content = rows.contents[i]!;
        await tx.execute({ sql: INSERT_CHUNK, args: [digest, content.byteLength, content] });
        await tx.execute({ sql: INSERT_OP, args: [i, rows.keys[i]!, digest] });
        await tx.execute({ sql: INSERT_LIVE, args: [PARTITION, rows.keys[i]!, digest] });
      }
      await tx.commit();
    });
    return timing;
  } finally {
    client.close();
  }
}

const ADAPTERS: readonly Adapter[] = [
  {
    name: "adapter-node",
    driver: () => nodeDriver(),
    rawLabel: "better-sqlite3 prepared statements in one db.transaction().immediate()",
    raw: rawBetterSqlite3,
  },
  {
    name: "adapter-libsql",
    driver: () => libsqlDriver(),
    rawLabel: 'client.transaction("write") / tx.execute per row / tx.commit',
    raw: rawLibsql,
  },
];

/** One batch through the unit of work: commit() timed; stage()'s ops/s pushed to `staged`. */
async function throughUnit(
  driver: Driver,
  file: string,
  rows: BatchRows,
  staged: number[],
): Promise<Timing> {
  const store = new CommitLogStore({ driver });
  try {
    const log = await store.open(file, { create: true });
    const unit = await log.begin();
    const ops = rows.keys.map((key, i) => put(key, rows.contents[i]!));
    const change = typedChange("run-snapshot.save", { workflowId: "bench", runId: "r1" }, ops);
    staged.push(rate(await time(BATCH, () => unit.stage(change))));
    const timing = await time(BATCH, async () => {
      const result = await unit.commit();
      if (result.committed[0]?.commits[0]?.opCount !== BATCH) throw new Error("batch did not land");
    });
    await log.release();
    return timing;
  } finally {
    await store.close();
  }
}

async function batchTable(context: SuiteContext, cases: unknown[]): Promise<Table> {
  const rows = batchRows();
  const lines: string[][] = [];
  for (const adapter of ADAPTERS) {
    const staged: number[] = [];
    const raw: Contender = { label: `${adapter.name} raw`, run: (file) => adapter.raw(file, rows) };
    const unit: Contender = {
      label: `${adapter.name} commit()`,
      run: (file) => throughUnit(adapter.driver(), file, rows, staged),
    };
    const [rawSample, unitSample] = (await interleave(context, [raw, unit])) as [Sample, Sample];
    const ratio = unitSample.median / rawSample.median;
    cases.push({ adapter: adapter.name, raw: rawSample, commit: unitSample, staged, ratio });
    lines.push([
      adapter.name,
      formatRate(rawSample.median),
      formatRate(unitSample.median),
      `${ratio.toFixed(2)}×`,
      formatRate(median(staged)),
      `±${(spread(rawSample) * 100).toFixed(1)}% / ±${(spread(unitSample) * 100).toFixed(1)}%`,
    ]);
  }
  return {
    title: "one 10,000-op partition batch (ops/s)",
    headers: [
      "adapter",
      "raw inserts",
      "unit.commit()",
      "commit/raw",
      "unit.stage()",
      "spread raw/commit",
    ],
    rows: lines,
  };
}

/** A log of 100 commits over 50 partitions: 2,000 ops each, the last commit of each all tombstones. */
async function buildLog(driver: Driver, file: string, opsTotal: number): Promise<void> {
  const store = new CommitLogStore({ driver });
  try {
    const log = await store.open(file, { create: true });
    const perCommit = opsTotal / 100;
    for (let c = 0; c < 100; c++) {
      const unit = await log.begin();
      const partition = c % 50;
      const ops =
        c < 50
          ? Array.from({ length: perCommit }, (_, i) =>
              put(`doc/${i}.json`, `{"partition":${partition},"i":${i},"v":${c}}`),
            )
          : Array.from({ length: perCommit }, (_, i) =>
              i % 4 === 0
                ? tombstone(`doc/${i}.json`)
                : put(`doc/${i}.json`, `{"i":${i},"v":${c}}`),
            );
      await unit.stage(typedChange("auto-definition.save", { id: `p${partition}` }, ops));
      await unit.commit();
    }
    await log.release();
  } finally {
    await store.close();
  }
}

async function catchUpTable(context: SuiteContext, cases: unknown[]): Promise<Table> {
  const opsTotal = context.quick ? 20_000 : 200_000;
  const lines: string[][] = [];
  for (const adapter of ADAPTERS) {
    const logFile = context.freshFile();
    await buildLog(adapter.driver(), logFile, opsTotal);
    const logs = new CommitLogStore({ driver: adapter.driver() });
    const log = await logs.open(logFile);
    const catchUp: Contender = {
      label: `${adapter.name} catchUp`,
      async run(file) {
        const models = new ReadModelStore({ driver: adapter.driver() });
        try {
          const model = await models.open(file, { create: true });
          const timing = await time(opsTotal, async () => {
            const result = await model.catchUp(log);
            if (result.ops !== opsTotal) throw new Error(`applied ${result.ops} ops`);
          });
          await model.release();
          return timing;
        } finally {
          await models.close();
        }
      },
    };
    const [sample] = (await interleave(context, [catchUp])) as [Sample];
    await log.release();
    await logs.close();
    cases.push({ adapter: adapter.name, ops: opsTotal, sample });
    lines.push([
      adapter.name,
      opsTotal.toLocaleString("en-US"),
      formatRate(sample.median),
      `±${(spread(sample) * 100).toFixed(1)}%`,
    ]);
  }
  return {
    title: "read model catch-up from a log of 100 commits (ops/s)",
    headers: ["adapter", "ops", "ops/s", "spread"],
    rows: lines,
  };
}

/** Runs the staging measurement in a process of its own, so its RSS is the staging's alone. */
function stagingProcess(file: string, count: number): Promise<StagingFigures> {
  const script = fileURLToPath(new URL("./commit-log-staging.js", import.meta.url));
  return new Promise((resolve, reject) => {
    execFile(
      process.execPath,
      ["--expose-gc", script, file, String(count)],
      { maxBuffer: 1 << 20 },
      (error, stdout, stderr) => {
        if (error) reject(new Error(`${error.message}\n${stderr}`));
        else resolve(JSON.parse(stdout.trim().split("\n").pop() ?? "") as StagingFigures);
      },
    );
  });
}

async function stagingTable(context: SuiteContext, cases: unknown[]): Promise<Table> {
  const sizes = context.quick ? [10_000, 100_000] : [10_000, 100_000, 1_000_000];
  const lines: string[][] = [];
  for (const count of sizes) {
    const figures = await stagingProcess(context.freshFile(), count);
    cases.push(figures);
    lines.push([
      count.toLocaleString("en-US"),
      mib(figures.rssBefore).toFixed(0),
      mib(figures.rssPeakStaging).toFixed(0),
      `+${mib(figures.rssPeakStaging - figures.rssBefore).toFixed(0)}`,
      mib(figures.heapAfterStaging).toFixed(1),
      mib(figures.rssPeakCommit).toFixed(0),
      formatRate((count * 1000) / figures.stageMs),
      formatRate((count * 1000) / figures.commitMs),
      String(figures.commits),
    ]);
  }
  return {
    title:
      "staging small ops, one stage() call each, adapter-node, one process per row (RSS in MiB)",
    headers: [
      "ops",
      "RSS before",
      "peak staging",
      "growth",
      "heap after",
      "peak commit",
      "stage ops/s",
      "commit ops/s",
      "commits",
    ],
    rows: lines,
  };
}

export const commitLogSuite: Suite = {
  name: "commit-log",
  summary: "unit-of-work batches vs raw inserts, catch-up rate, staging memory",
  async run(context) {
    const batch: unknown[] = [];
    const catchUp: unknown[] = [];
    const staging: unknown[] = [];
    const tables = [
      await batchTable(context, batch),
      await catchUpTable(context, catchUp),
      await stagingTable(context, staging),
    ];
    return {
      notes: [
        "durability: WAL, synchronous=NORMAL on every side (runledger's default)",
        ...ADAPTERS.map((adapter) => `raw ${adapter.name}: ${adapter.rawLabel}`),
        "batch: same schema on both sides; commit() includes sealing (the spill of the staged rows), the batch transaction, the chunk check and the cleanup; stage() is timed separately",
        "catch-up: a fresh read model per run, from one log built before timing",
        "staging: a fresh process per size; RSS sampled every 5,000 stage() calls and every 50 ms of the commit; the unit spills every 1,024 ops",
      ],
      tables,
      data: { batch, catchUp, staging },
    };
  },
};

function median(values: readonly number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[sorted.length >> 1] ?? 0;
}

function mib(bytes: number): number {
  return bytes / (1024 * 1024);
}
