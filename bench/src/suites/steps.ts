/**
 * Workflow steps (issue 5), side by side with two other libraries' durable
 * state, each in a process of its own per run (so peak RSS is that run's):
 *
 * - runledger (adapter-node, adapter-libsql): one file per run; a step is
 *   one `lease.transact` holding one `tx.workspace.apply` that replaces the
 *   ~200-byte `state/output.json` with the step's output, with its journal
 *   event (one event per step); every earlier root stays in history. (A new
 *   file per step in one flat directory rewrites that directory's tree each
 *   step, which grows quadratically: see docs/benchmarks.md.)
 * - LangGraph `@langchain/langgraph-checkpoint-sqlite` SqliteSaver: a step is
 *   `put` (the new checkpoint, holding the ~200-byte step output as channel
 *   value) + `putWrites` (the step's task write), as LangGraph's loop does.
 * - Mastra `@mastra/libsql` LibSQLStore: a step is `persistWorkflowSnapshot`
 *   of the run snapshot, whose `context` gains the step's result, as Mastra's
 *   engine persists it after each step.
 *
 * Scenarios: 1 run × 5,000 steps and 100 runs × 50 steps. RSS is sampled
 * every 1,000 steps to show whether it stays flat as the steps grow.
 *
 * This module is also the child process: `node steps.js <contender> <runs> <steps> <path>`.
 */
import { mkdir, readdir, rm } from "node:fs/promises";
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import { libsqlDriver } from "@runledger/adapter-libsql";
import { nodeDriver } from "@runledger/adapter-node";
import { type Driver, RunStore } from "@runledger/core";
import Database from "better-sqlite3";
import {
  collectGarbage,
  databaseSize,
  formatMib,
  formatRate,
  interleave,
  isChildEntry,
  reportToParent,
  runChild,
  type Sample,
  type Suite,
  spread,
  type Table,
  trackPeakRss,
} from "../harness.js";
import { type Recording, recordingDriver, replay } from "../replay.js";

interface StepFigures {
  readonly contender: string;
  readonly runs: number;
  readonly steps: number;
  readonly ms: number;
  /** Every database file the contender wrote, after close (file + WAL). */
  readonly bytes: number;
  /** RSS once the store is set up, after a collection, before the first step. */
  readonly rssBaseline: number;
  readonly rssPeak: number;
  /** RSS after every 1,000 steps. */
  readonly rssSamples: readonly number[];
  readonly durability: string;
}

interface Scenario {
  readonly runs: number;
  readonly steps: number;
}

/** ~200 bytes of step output, different for every step. */
function output(run: number, step: number): string {
  return JSON.stringify({
    run,
    step,
    status: "completed",
    result: { invoice: `INV-${run}-${step}`, amount: 1000 + step, currency: "EUR" },
    note: "x".repeat(96),
  });
}

/** What one contender does: set up, run steps, close; the child times everything between setup and close. */
interface StepRunner {
  readonly durability: string;
  /** Runs one step of `run`; `step` counts from 0 within the run. */
  step(run: number, step: number): Promise<void>;
  /** Called before the first step of each run, and after its last. */
  startRun?(run: number): Promise<void>;
  endRun?(run: number): Promise<void>;
  close(): Promise<void>;
}

type RunnerFactory = (path: string, scenario: Scenario) => Promise<StepRunner>;

function runledger(driver: () => Driver): RunnerFactory {
  return async (dir) => {
    await mkdir(dir, { recursive: true });
    const store = new RunStore({ driver: driver() });
    const encoder = new TextEncoder();
    let lease: Awaited<ReturnType<RunStore["open"]>> | undefined;
    return {
      durability: "WAL, synchronous=NORMAL (runledger's default)",
      async startRun(run) {
        lease = await store.open(join(dir, `run-${run}.db`), {
          create: { workflowId: "bench", runId: `run-${run}` },
        });
      },
      async step(run, step) {
        const bytes = encoder.encode(output(run, step));
        await lease?.transact((tx) =>
          tx.workspace.apply(
            { put: { "state/output.json": bytes } },
            { event: { kind: "step.completed", step, status: "success" } },
          ),
        );
      },
      async endRun() {
        await lease?.release();
      },
      close: () => store.close(),
    };
  };
}

/**
 * The raw driver doing runledger's work: the scenario is first run through
 * adapter-node with every statement recorded (untimed, in a scratch
 * directory), then each run's recorded statements are replayed through
 * better-sqlite3 directly (see ../replay.ts) — the same rows, written by
 * SQLite with no core above it. Its steps are replayed a run at a time, at
 * the end of each run, so its RSS samples say nothing.
 */
const rawReplay: RunnerFactory = async (dir, scenario) => {
  const scratch = `${dir}-recording`;
  const recording: Recording = { connections: [] };
  const recorder = await runledger(() => recordingDriver(nodeDriver(), recording))(
    scratch,
    scenario,
  );
  for (let run = 0; run < scenario.runs; run++) {
    await recorder.startRun?.(run);
    for (let step = 0; step < scenario.steps; step++) await recorder.step(run, step);
    await recorder.endRun?.(run);
  }
  await recorder.close();
  await rm(scratch, { recursive: true, force: true });
  if (recording.connections.length !== scenario.runs) {
    throw new Error(
      `expected one recorded connection per run, got ${recording.connections.length} for ${scenario.runs} runs`,
    );
  }
  await mkdir(dir, { recursive: true });
  return {
    durability: "WAL, synchronous=NORMAL (the recorded PRAGMAs, replayed)",
    async step() {},
    async endRun(run) {
      replay(join(dir, `run-${run}.db`), recording.connections[run] ?? []);
    },
    async close() {},
  };
};

/**
 * The floor: the least any store that gives each step its own transaction
 * can do — better-sqlite3 writing one row (the step's event and its output)
 * per BEGIN IMMEDIATE … COMMIT, statements prepared once, no workspace, no
 * journal rules. No implementation of the step contract writes less, so this
 * contender's steps/s is the ceiling of every ratio in the table.
 */
const oneRowFloor: RunnerFactory = async (file) => {
  const db = new Database(file);
  db.pragma("journal_mode = WAL");
  db.pragma("synchronous = NORMAL");
  db.exec(`CREATE TABLE step (
  run INTEGER NOT NULL,
  step INTEGER NOT NULL,
  event TEXT NOT NULL,
  output BLOB NOT NULL,
  PRIMARY KEY (run, step)
) STRICT`);
  const begin = db.prepare("BEGIN IMMEDIATE");
  const insert = db.prepare("INSERT INTO step (run, step, event, output) VALUES (?, ?, ?, ?)");
  const commit = db.prepare("COMMIT");
  const encoder = new TextEncoder();
  return {
    durability: "WAL, synchronous=NORMAL (set here)",
    async step(run, step) {
      const event = JSON.stringify({ kind: "step.completed", step, status: "success" });
      begin.run();
      insert.run(run, step, event, encoder.encode(output(run, step)));
      commit.run();
    },
    async close() {
      db.close();
    },
  };
};

const langGraph: RunnerFactory = async (file) => {
  const { SqliteSaver } = await import("@langchain/langgraph-checkpoint-sqlite");
  const { uuid6 } = await import("@langchain/langgraph-checkpoint");
  const db = new Database(file);
  // Same durability as runledger's default (better-sqlite3's own default is FULL);
  // the saver sets WAL itself on first use.
  db.pragma("synchronous = NORMAL");
  const saver = new SqliteSaver(db);
  let config: { configurable: Record<string, string> } = { configurable: {} };
  return {
    durability:
      "WAL (SqliteSaver.setup), synchronous=NORMAL (set here; better-sqlite3's default is FULL)",
    async startRun(run) {
      config = { configurable: { thread_id: `run-${run}`, checkpoint_ns: "" } };
    },
    async step(run, step) {
      const value = output(run, step);
      const checkpoint = {
        v: 4,
        id: uuid6(-1),
        ts: new Date().toISOString(),
        channel_values: { output: value, step },
        channel_versions: { output: step + 1, step: step + 1 },
        versions_seen: { worker: { output: step } },
      };
      const metadata = { source: "loop" as const, step, parents: {} };
      const next = await saver.put(config, checkpoint, metadata);
      await saver.putWrites(next, [["output", value]], `task-${run}-${step}`);
      config = next as typeof config;
    },
    async close() {
      db.close();
    },
  };
};

const mastra: RunnerFactory = async (file) => {
  const { LibSQLStore } = await import("@mastra/libsql");
  const store = new LibSQLStore({ id: "bench", url: pathToFileURL(file).href });
  await store.init();
  const workflows = await store.getStore("workflows");
  if (workflows === undefined) throw new Error("LibSQLStore has no workflows domain");
  let snapshot: Record<string, unknown> & { context: Record<string, unknown> };
  return {
    durability: "WAL, synchronous=NORMAL (LibSQLStore's own local pragmas)",
    async startRun(run) {
      snapshot = {
        runId: `run-${run}`,
        status: "running",
        value: {},
        context: { input: { run } },
        serializedStepGraph: [],
        activePaths: [],
        activeStepsPath: {},
        suspendedPaths: {},
        resumeLabels: {},
        waitingPaths: {},
        timestamp: Date.now(),
      };
    },
    async step(run, step) {
      const now = Date.now();
      snapshot.context[`step-${step}`] = {
        status: "success",
        payload: { step },
        output: JSON.parse(output(run, step)),
        startedAt: now,
        endedAt: now,
      };
      snapshot.timestamp = now;
      await workflows.persistWorkflowSnapshot({
        workflowName: "bench",
        runId: `run-${run}`,
        snapshot: snapshot as never,
      });
    },
    close: () => store.close(),
  };
};

interface StepContender {
  readonly label: string;
  readonly factory: RunnerFactory;
  /**
   * Steps per run above which each step costs more as the run grows (the
   * whole snapshot is persisted every step): such a scenario is timed once,
   * with no untimed round, to keep the suite's length bounded.
   */
  readonly quadraticAbove?: number;
}

const CONTENDERS: Readonly<Record<string, StepContender>> = {
  "runledger-node": { label: "runledger adapter-node", factory: runledger(() => nodeDriver()) },
  "runledger-libsql": {
    label: "runledger adapter-libsql",
    factory: runledger(() => libsqlDriver()),
  },
  "raw-replay": { label: "raw better-sqlite3, runledger's statements", factory: rawReplay },
  "one-row-floor": { label: "raw better-sqlite3, one row per step", factory: oneRowFloor },
  langgraph: { label: "LangGraph SqliteSaver", factory: langGraph },
  mastra: { label: "Mastra LibSQLStore", factory: mastra, quadraticAbove: 1_000 },
};

/** The child: one contender, one scenario, one fresh path. */
async function child(name: string, scenario: Scenario, path: string): Promise<StepFigures> {
  const contender = CONTENDERS[name];
  if (contender === undefined) throw new Error(`unknown contender ${name}`);
  const runner = await contender.factory(path, scenario);
  collectGarbage();
  const rss = trackPeakRss();
  const rssBaseline = rss.sample();
  const rssSamples: number[] = [];
  let done = 0;
  const started = performance.now();
  for (let run = 0; run < scenario.runs; run++) {
    await runner.startRun?.(run);
    for (let step = 0; step < scenario.steps; step++) {
      await runner.step(run, step);
      if (++done % 1_000 === 0) rssSamples.push(rss.sample());
    }
    await runner.endRun?.(run);
  }
  await runner.close();
  const ms = performance.now() - started;
  const rssPeak = rss.stop();
  return {
    contender: name,
    runs: scenario.runs,
    steps: done,
    ms,
    bytes: await pathSize(path),
    rssBaseline,
    rssPeak,
    rssSamples,
    durability: runner.durability,
  };
}

/** A database file, or a directory of them. */
async function pathSize(path: string): Promise<number> {
  const entries = await readdir(path).catch(() => undefined);
  if (entries === undefined) return databaseSize(path);
  const sizes = await Promise.all(
    entries.filter((name) => name.endsWith(".db")).map((name) => databaseSize(join(path, name))),
  );
  return sizes.reduce((a, b) => a + b, 0);
}

const SCENARIOS = (quick: boolean): Scenario[] =>
  quick
    ? [
        { runs: 1, steps: 1_000 },
        { runs: 20, steps: 50 },
      ]
    : [
        { runs: 1, steps: 5_000 },
        { runs: 100, steps: 50 },
      ];

export const stepsSuite: Suite = {
  name: "steps",
  summary:
    "workflow steps/s, file size and peak RSS vs LangGraph SqliteSaver and Mastra LibSQLStore",
  async run(context) {
    const runs = Math.min(context.runs, 3);
    const tables: Table[] = [];
    const cases: unknown[] = [];
    const durability = new Map<string, string>();
    // A contender that cannot run here (install, Node version) is reported and left out.
    const failures: string[] = [];
    const usable: [string, StepContender][] = [];
    for (const [name, contender] of Object.entries(CONTENDERS)) {
      try {
        await runChild<StepFigures>(import.meta.url, [name, "1", "10", context.freshFile()]);
        usable.push([name, contender]);
      } catch (error) {
        failures.push(`NOT RUN ${contender.label}: ${(error as Error).message}`);
      }
    }
    for (const scenario of SCENARIOS(context.quick)) {
      const figures = new Map<string, StepFigures[]>();
      const once = new Set(
        usable
          .filter(([, contender]) => scenario.steps > (contender.quadraticAbove ?? Infinity))
          .map(([, contender]) => contender.label),
      );
      const contenders = usable.map(([name, { label }]) => ({
        label,
        async run(file: string) {
          const runledgerDir = name.startsWith("runledger") || name === "raw-replay";
          const path = runledgerDir ? `${file}-runs` : file;
          try {
            const result = await runChild<StepFigures>(import.meta.url, [
              name,
              String(scenario.runs),
              String(scenario.steps),
              path,
            ]);
            figures.set(name, [...(figures.get(name) ?? []), result]);
            durability.set(label, result.durability);
            return { ops: result.steps, ns: BigInt(Math.round(result.ms * 1e6)) };
          } finally {
            if (runledgerDir) await rm(path, { recursive: true, force: true });
          }
        },
      }));
      const samples = [
        ...(await interleave(
          { ...context, runs },
          contenders.filter((contender) => !once.has(contender.label)),
        )),
        ...(await interleave(
          { ...context, runs: 1 },
          contenders.filter((contender) => once.has(contender.label)),
          { warmupRuns: 0 },
        )),
      ];
      const byLabel = new Map(samples.map((sample) => [sample.label, sample]));
      const langGraphRate = byLabel.get(CONTENDERS.langgraph?.label ?? "")?.median ?? Number.NaN;
      const rawRate = byLabel.get(CONTENDERS["raw-replay"]?.label ?? "")?.median ?? Number.NaN;
      const rows: string[][] = [];
      for (const [name, { label }] of usable) {
        const sample = byLabel.get(label) as Sample;
        // The run whose rate is the median's neighbour: its size and RSS are shown.
        // The untimed round's figures are left out.
        const runsOf = (figures.get(name) ?? []).slice(once.has(label) ? 0 : 1);
        const peak = Math.max(...runsOf.map((f) => f.rssPeak));
        const baseline = Math.min(...runsOf.map((f) => f.rssBaseline));
        const last = runsOf.at(-1) as StepFigures;
        const trail = last.rssSamples.map((bytes) => formatMib(bytes).replace(/\.\d$/, ""));
        rows.push([
          label,
          formatRate(sample.median),
          `${(sample.median / langGraphRate).toFixed(2)}×`,
          `${(sample.median / rawRate).toFixed(2)}×`,
          formatMib(last.bytes),
          formatMib(baseline),
          formatMib(peak),
          trail.length > 6 ? `${trail.slice(0, 3).join(", ")} … ${trail.at(-1)}` : trail.join(", "),
          once.has(label) ? "1 run" : `±${(spread(sample) * 100).toFixed(1)}%`,
        ]);
        cases.push({ scenario, contender: name, label, sample, runs: runsOf });
      }
      tables.push({
        title: `${scenario.runs} run${scenario.runs > 1 ? "s" : ""} × ${scenario.steps.toLocaleString("en-US")} steps (steps/s; sizes and RSS in MiB, RSS over the timed runs)`,
        headers: [
          "contender",
          "steps/s",
          "vs LangGraph",
          "vs raw replay",
          "file size",
          "RSS base",
          "peak RSS",
          "RSS per 1,000 steps",
          "spread",
        ],
        rows,
      });
    }
    return {
      notes: [
        ...[...durability].map(([label, text]) => `durability ${label}: ${text}`),
        "step: runledger = lease.transact(tx => tx.workspace.apply({ put: { state/output.json: ~200 B } }, { event })) (one journal event); LangGraph = saver.put(checkpoint with the ~200 B output) + saver.putWrites([[output, ~200 B]]); Mastra = persistWorkflowSnapshot(snapshot whose context gains the step's result)",
        "raw replay: the scenario run once through adapter-node with every statement recorded (untimed), then each run's statements replayed through better-sqlite3 directly (prepared once, synchronous): the same rows with no core above SQLite; replayed at the end of each run, so its RSS samples mean nothing",
        "one-row floor: better-sqlite3 writing the step's event and output as one row per BEGIN IMMEDIATE … COMMIT (prepared once, one file): the least any store giving each step its own transaction can write, so its 'vs LangGraph' is the ceiling of every implementation's on this machine",
        "runledger writes one file per run (size = all of them); LangGraph and Mastra one file per contender; runledger's timing includes creating each run (store.open with create) and releasing it",
        `each run in a process of its own (peak RSS is that run's); one discarded round, then the contenders interleaved over ${runs} runs; a contender whose step cost grows with the run (Mastra, above 1,000 steps per run) is timed once, without the discarded round`,
        ...failures,
      ],
      tables,
      data: { cases },
    };
  },
};

if (isChildEntry(import.meta.url)) {
  const [name, runs, steps, path] = process.argv.slice(2);
  reportToParent(
    await child(name as string, { runs: Number(runs), steps: Number(steps) }, path as string),
  );
}
