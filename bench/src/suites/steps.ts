/**
 * Workflow steps (issues 5 and 13), side by side with two other libraries'
 * durable state, each in a process of its own per run (so peak RSS is that
 * run's). Four workloads:
 *
 * - fixed state: a step is one journal event plus one ~200-byte piece of
 *   state. runledger replaces `state/output.json` in one `lease.transact`
 *   holding one `tx.workspace.apply` with the event; LangGraph SqliteSaver
 *   does `put` (the checkpoint, the output as channel value) + `putWrites`,
 *   as its loop does; Mastra LibSQLStore `persistWorkflowSnapshot`s the run
 *   snapshot whose `context` gains the step's result, as its engine does.
 *   The raw replay of runledger's own statements and the one-row floor bound
 *   the table from below. Timed in a fresh process, and warm: after as many
 *   untimed steps of another run in the same process.
 * - growing state: each step adds a ~300-byte message — runledger as a new
 *   file `messages/m-NNNNNN.json` in one directory; LangGraph as one more
 *   entry of its `messages` channel, whose whole list every checkpoint
 *   persists (as an add_messages channel does). The same two bounds: what
 *   SQLite alone costs for this layout's rows, and one row per step.
 * - history: one ~1.5 MB history file that gains a ~300-byte line every step
 *   and is rewritten whole (runledger `history.jsonl`; LangGraph a channel
 *   holding the same text).
 * - the directory curve: steps/s adding one new file per step to a directory
 *   already holding n files (set up untimed).
 *
 * Plus counts per step — statements and WAL frames — for runledger (its
 * recorded statements replayed on a fresh file with checkpoints off, see
 * ../replay.ts) and LangGraph (its own handle, checkpoints off, every
 * statement traced).
 *
 * This module is also the child process:
 *   `node steps.js <contender> <workload> <runs> <steps> <path> [<warm-up steps>]`,
 *   `node steps.js directory <adapter> <files> <steps> <path>`,
 *   `node steps.js count <contender> <workload> <steps> <path>`,
 *   `node steps.js record <workload> <runs> <steps> <dir> <file>`.
 */

import { readdirSync, readFileSync } from "node:fs";
import { mkdir, readdir, readFile, rm, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import { deserialize, serialize } from "node:v8";
import { libsqlDriver } from "@runledger/adapter-libsql";
import { nodeDriver } from "@runledger/adapter-node";
import { RunStore } from "@runledger/core";
import { ConnectionProvider, type WriteScope } from "@runledger/core/engine";
import type { Driver } from "@runledger/core/port";
import Database from "better-sqlite3";
import LibsqlDatabase from "libsql";
import {
  collectGarbage,
  databaseSize,
  formatMib,
  formatRate,
  interleave,
  isChildEntry,
  median,
  reportToParent,
  runChild,
  type Sample,
  type Suite,
  spread,
  type Table,
  trackPeakRss,
} from "../harness.js";
import { type Layout, layoutOf } from "../layout.js";
import { leastWork } from "../least-work.js";
import { addMastraStep, type MastraSnapshot, newMastraSnapshot } from "../mastra.js";
import {
  BEGIN,
  countWal,
  createWhole,
  type Engine,
  framesBetween,
  framesByObject,
  type Recorded,
  type Recording,
  type ReplayOptions,
  recordingDriver,
  replay,
  walPages,
  walSize,
} from "../replay.js";

/** What each step writes: see the header. */
type Workload = "fixed" | "growing" | "history";

interface StepFigures {
  readonly contender: string;
  readonly runs: number;
  readonly steps: number;
  readonly ms: number;
  /**
   * CPU time this process spent over the same span (user + system). On a
   * machine shared with other work, wall time includes waiting for a core;
   * this does not (work in other threads, e.g. libSQL's, is counted too).
   */
  readonly cpuMs: number;
  /**
   * Of `cpuMs`, the time of threads other than the main one (Linux only): V8's
   * optimizing compiler and its collector's helpers, since every contender's
   * SQLite runs on the main thread. Undefined where /proc is not there.
   */
  readonly otherThreadsMs: number | undefined;
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
  readonly workload: Workload;
  readonly runs: number;
  readonly steps: number;
  /**
   * Untimed steps the same process runs first, on a run (and file) of their
   * own: the timed steps are then a long-running engine's next run, its
   * step's code compiled by V8 once already, rather than a fresh process's.
   */
  readonly warmup?: number;
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

/** One chat message of about 300 bytes (JSON), different for every step. */
function message(run: number, step: number): { role: string; id: string; content: string } {
  const words = `step ${step} of run ${run}: the agent read the tool result and wrote this reply. `;
  return {
    role: step % 2 === 0 ? "assistant" : "tool",
    id: `msg-${run}-${step}`,
    content: words.repeat(4).slice(0, 250),
  };
}

/** `messages/m-000001.json`: the growing workload's new file for `step`. */
function messagePath(step: number): string {
  return `messages/m-${String(step + 1).padStart(6, "0")}.json`;
}

/** The history workload's starting text: 5,000 earlier messages, one JSON line each (~1.5 MB). */
function historyBase(run: number): string {
  const lines: string[] = [];
  for (let step = -5_000; step < 0; step++) lines.push(JSON.stringify(message(run, step)));
  return `${lines.join("\n")}\n`;
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

type Lease = Awaited<ReturnType<RunStore["open"]>>;

function runledger(driver: () => Driver): RunnerFactory {
  return async (dir, scenario) => {
    await mkdir(dir, { recursive: true });
    const store = new RunStore({ driver: driver() });
    const encoder = new TextEncoder();
    let lease: Lease | undefined;
    let history = new Uint8Array(0);
    const content = (run: number, step: number): [string, Uint8Array] => {
      switch (scenario.workload) {
        case "fixed":
          return ["state/output.json", encoder.encode(output(run, step))];
        case "growing":
          return [messagePath(step), encoder.encode(JSON.stringify(message(run, step)))];
        case "history": {
          // The workflow keeps its history as bytes and appends a line: one copy per step.
          const line = encoder.encode(`${JSON.stringify(message(run, step))}\n`);
          const next = new Uint8Array(history.length + line.length);
          next.set(history);
          next.set(line, history.length);
          history = next;
          return ["history.jsonl", history];
        }
      }
    };
    return {
      durability: "WAL, synchronous=NORMAL (runledger's default)",
      async startRun(run) {
        lease = await store.open(join(dir, `run-${run}.db`), {
          create: { workflowId: "bench", runId: `run-${run}` },
        });
        if (scenario.workload === "history") history = encoder.encode(historyBase(run));
      },
      async step(run, step) {
        const [path, bytes] = content(run, step);
        await lease?.transact((tx) =>
          tx.workspace.apply(
            { put: { [path]: bytes } },
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

/** libsql's synchronous API, the engine under @libsql/client for a local file. */
const libsqlEngine = LibsqlDatabase as unknown as Engine;

/**
 * The raw driver doing runledger's work: the scenario is first run through
 * the adapter with every statement recorded (untimed, in a scratch
 * directory), then each run's recorded statements are replayed through the
 * adapter's engine directly (see ../replay.ts) — better-sqlite3 for
 * adapter-node, the run created whole as adapter-node creates it; libsql's
 * own synchronous API for adapter-libsql, the run created in place and its
 * WAL folded in before the close, as adapter-libsql does — the same rows,
 * written by SQLite with no core above it. Its steps are replayed a run at a
 * time, at the end of each run, so its RSS samples say nothing.
 */
function rawReplay(
  driver: () => Driver,
  replaying: Omit<ReplayOptions, "created" | "beforeWrite"> = {},
  withLeastWork = false,
): RunnerFactory {
  return async (dir, scenario) => {
    const recording = await recordScenario(driver, dir, scenario);
    await mkdir(dir, { recursive: true });
    return {
      durability: "WAL, synchronous=NORMAL (the recorded PRAGMAs, replayed)",
      async step() {},
      async endRun(run) {
        const work = withLeastWork ? leastWorkOfRun(run) : undefined;
        replay(join(dir, `run-${run}.db`), recording.connections[run] ?? [], {
          created: recording.staged[run],
          ...replaying,
          ...(work === undefined ? {} : { beforeWrite: work.step }),
        });
        if (work !== undefined && work.steps() < scenario.steps) {
          throw new Error(`the least work ran ${work.steps()} times for ${scenario.steps} steps`);
        }
        // A handle that closes late is freed when the event loop turns;
        // adapter-libsql lets it turn every 256 statements, about once a run
        // of 50 steps (finalizers.ts).
        if (replaying.closesLate) await new Promise<void>((resolve) => setImmediate(resolve));
      },
      async close() {},
    };
  };
}

/**
 * The scenario run through runledger with every statement recorded (untimed,
 * in a scratch directory beside `dir`): one recorded connection per run.
 */
async function recordScenario(
  driver: () => Driver,
  dir: string,
  scenario: Scenario,
): Promise<Recording> {
  const scratch = `${dir}-recording`;
  const recording: Recording = { connections: [], staged: [] };
  const recorder = await runledger(() => recordingDriver(driver(), recording))(scratch, scenario);
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
  return recording;
}

/** A transaction's recorded statements through `tx`: a step's one statement with no frame of its own. */
function runStatements(tx: WriteScope, statements: readonly Recorded[]): Promise<unknown> {
  const [only] = statements;
  if (statements.length === 1 && only?.kind === "statement")
    return tx.execute(only.sql, only.params);
  return (async () => {
    for (const call of statements) {
      if (call.kind === "script") await tx.executeScript(call.sql);
      else await tx.execute(call.sql, call.params);
    }
  })();
}

/**
 * `recordScenario` on adapter-node in a child process of its own, handed
 * over as a file (v8's serialization keeps the parameters' types).
 */
async function recordInChild(dir: string, scenario: Scenario): Promise<Recording> {
  const file = `${dir}-recording.bin`;
  const args = ["record", scenario.workload, String(scenario.runs), String(scenario.steps)];
  await runChild(import.meta.url, [...args, `${dir}-recording`, file]);
  const recording = deserialize(await readFile(file)) as Recording;
  await rm(file, { force: true });
  return recording;
}

/** The child that records a scenario for `recordInChild`. */
async function recordChild(
  scenario: Scenario,
  dir: string,
  file: string,
): Promise<{ file: string }> {
  await writeFile(file, serialize(await recordScenario(() => nodeDriver(), dir, scenario)));
  return { file };
}

/**
 * The statements of each write transaction a recorded connection made, in
 * order: what ran between each `BEGIN IMMEDIATE` and its `COMMIT`.
 */
function writeTransactions(calls: readonly Recorded[]): Recorded[][] {
  const transactions: Recorded[][] = [];
  let open: Recorded[] | undefined;
  for (const call of calls) {
    if (call.sql === BEGIN.immediate) open = [];
    else if (call.sql === "COMMIT" && open !== undefined) {
      transactions.push(open);
      open = undefined;
    } else open?.push(call);
  }
  return transactions;
}

/**
 * Core's transaction around runledger's own statements: each step is one
 * `lease.transact` of a `ConnectionProvider` lease (core's engine API — the
 * entry's queue, the async context, the transaction owner, the scope and its
 * operation) whose callback does the work a fixed step of the format needs
 * (../least-work.ts) and runs that step's recorded statements through
 * `tx.execute`, on a run created whole from its recording, all on
 * adapter-node (`recordInChild` records there). What a step costs with
 * core's transaction and no run or workspace code: the run API's
 * apply could at best bring a step down to this. The recording is made in a
 * process of its own (`recordInChild`): made here, it would have run core's
 * transaction code thousands of times before the timed steps, which then
 * would not be a fresh process's.
 */
const transactionLeastWork: RunnerFactory = async (dir, scenario) => {
  const recording = await recordInChild(dir, scenario);
  await mkdir(dir, { recursive: true });
  const provider = new ConnectionProvider({ driver: nodeDriver() });
  let lease: Awaited<ReturnType<typeof provider.open>> | undefined;
  let transactions: Recorded[][] = [];
  let work = leastWorkOfRun(0);
  return {
    durability: "WAL, synchronous=NORMAL (core's defaults)",
    async startRun(run) {
      const file = join(dir, `run-${run}.db`);
      createWhole(file, recording.staged[run] ?? []);
      transactions = writeTransactions(recording.connections[run] ?? []);
      if (transactions.length !== scenario.steps) {
        throw new Error(
          `run ${run} recorded ${transactions.length} write transactions for ${scenario.steps} steps`,
        );
      }
      work = leastWorkOfRun(run);
      lease = await provider.open(file);
    },
    async step(_run, step) {
      const statements = transactions[step] ?? [];
      await lease?.transact((tx) => {
        work.step();
        return runStatements(tx, statements);
      });
    },
    async endRun() {
      await lease?.release();
      if (work.steps() !== scenario.steps) {
        throw new Error(`the least work ran ${work.steps()} times for ${scenario.steps} steps`);
      }
    },
    close: () => provider.close(),
  };
};

/**
 * Before each write transaction of a replayed run, the work a fixed step of
 * runledger's format cannot skip (../least-work.ts) on that step's output, as
 * the runledger contenders' steps encode it. A run's first transactions (its
 * opening) count as steps too: a handful among thousands.
 */
function leastWorkOfRun(run: number): { step: () => void; steps: () => number } {
  const work = leastWork();
  const encoder = new TextEncoder();
  let step = 0;
  return {
    step: () => {
      work.step(encoder.encode(output(run, step)), step);
      step++;
    },
    steps: () => step,
  };
}

/**
 * The floor: the least any store that gives each step its own transaction
 * can do — better-sqlite3 writing one row (the step's event and its output,
 * or in the growing workload its new message)
 * per BEGIN IMMEDIATE … COMMIT, statements prepared once, no workspace, no
 * journal rules. No implementation of the step contract writes less, so this
 * contender's steps/s is the ceiling of every ratio in the table.
 */
const oneRowFloor: RunnerFactory = async (file, scenario) => {
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
      const state =
        scenario.workload === "growing" ? JSON.stringify(message(run, step)) : output(run, step);
      insert.run(run, step, event, encoder.encode(state));
      commit.run();
    },
    async close() {
      db.close();
    },
  };
};

/** LangGraph's saver on a handle the caller may have opened (the count mode traces it). */
function langGraphOn(open: (file: string) => Database.Database): RunnerFactory {
  return async (file, scenario) => {
    const { SqliteSaver } = await import("@langchain/langgraph-checkpoint-sqlite");
    const { uuid6 } = await import("@langchain/langgraph-checkpoint");
    const db = open(file);
    // Same durability as runledger's default (better-sqlite3's own default is FULL);
    // the saver sets WAL itself on first use.
    db.pragma("synchronous = NORMAL");
    const saver = new SqliteSaver(db);
    // Its tables, made here rather than inside the first step's `put`.
    (saver as unknown as { setup(): void }).setup();
    let config: { configurable: Record<string, string> } = { configurable: {} };
    let messages: ReturnType<typeof message>[] = [];
    let history = "";
    /** The checkpoint's channel values after `step`, and the step's own write. */
    const state = (run: number, step: number): [Record<string, unknown>, [string, unknown]] => {
      switch (scenario.workload) {
        case "fixed": {
          const value = output(run, step);
          return [{ output: value, step }, ["output", value]];
        }
        case "growing": {
          const added = message(run, step);
          messages = [...messages, added];
          return [{ messages, step }, ["messages", [added]]];
        }
        case "history": {
          const line = `${JSON.stringify(message(run, step))}\n`;
          history += line;
          return [{ history, step }, ["history", line]];
        }
      }
    };
    const channel = { fixed: "output", growing: "messages", history: "history" }[scenario.workload];
    return {
      durability:
        "WAL (SqliteSaver.setup), synchronous=NORMAL (set here; better-sqlite3's default is FULL)",
      async startRun(run) {
        config = { configurable: { thread_id: `run-${run}`, checkpoint_ns: "" } };
        messages = [];
        if (scenario.workload === "history") history = historyBase(run);
      },
      async step(run, step) {
        const [values, write] = state(run, step);
        const checkpoint = {
          v: 4,
          id: uuid6(-1),
          ts: new Date().toISOString(),
          channel_values: values,
          channel_versions: { [channel]: step + 1, step: step + 1 },
          versions_seen: { worker: { [channel]: step } },
        };
        const metadata = { source: "loop" as const, step, parents: {} };
        const next = await saver.put(config, checkpoint, metadata);
        await saver.putWrites(next, [write], `task-${run}-${step}`);
        config = next as typeof config;
      },
      async close() {
        db.close();
      },
    };
  };
}

const langGraph = langGraphOn((file) => new Database(file));

const mastra: RunnerFactory = async (file) => {
  const { LibSQLStore } = await import("@mastra/libsql");
  const store = new LibSQLStore({ id: "bench", url: pathToFileURL(file).href });
  await store.init();
  const workflows = await store.getStore("workflows");
  if (workflows === undefined) throw new Error("LibSQLStore has no workflows domain");
  let snapshot: MastraSnapshot;
  return {
    durability: "WAL, synchronous=NORMAL (LibSQLStore's own local pragmas)",
    async startRun(run) {
      snapshot = newMastraSnapshot(`run-${run}`, { run });
    },
    async step(run, step) {
      addMastraStep(snapshot, step, JSON.parse(output(run, step)));
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
  readonly workloads: readonly Workload[];
  /**
   * Whether each step of this scenario costs more as the run grows (the
   * whole state is persisted every step): such a scenario is timed once,
   * with no untimed round, to keep the suite's length bounded.
   */
  readonly quadratic?: (scenario: Scenario) => boolean;
  /** Writes a file per run, in a directory it is given (else one file at the path it is given). */
  readonly filePerRun?: true;
}

const ALL: readonly Workload[] = ["fixed", "growing", "history"];

const CONTENDERS: Readonly<Record<string, StepContender>> = {
  "runledger-node": {
    label: "runledger adapter-node",
    factory: runledger(() => nodeDriver()),
    workloads: ALL,
    filePerRun: true,
  },
  "runledger-libsql": {
    label: "runledger adapter-libsql",
    factory: runledger(() => libsqlDriver()),
    workloads: ALL,
    filePerRun: true,
  },
  "raw-replay": {
    label: "raw better-sqlite3, runledger's statements",
    factory: rawReplay(() => nodeDriver()),
    workloads: ["fixed", "growing"],
    filePerRun: true,
  },
  "replay-least-work": {
    label: "raw better-sqlite3, runledger's statements + the work its format needs",
    factory: rawReplay(() => nodeDriver(), {}, true),
    workloads: ["fixed"],
    filePerRun: true,
  },
  "transaction-least-work": {
    label: "runledger's transaction (engine API), its statements + the work its format needs",
    factory: transactionLeastWork,
    workloads: ["fixed"],
    filePerRun: true,
  },
  "raw-replay-libsql": {
    label: "raw libsql, adapter-libsql's statements",
    factory: rawReplay(() => libsqlDriver(), { engine: libsqlEngine, closesLate: true }),
    workloads: ["fixed"],
    filePerRun: true,
  },
  "one-row-floor": {
    label: "raw better-sqlite3, one row per step",
    factory: oneRowFloor,
    workloads: ["fixed", "growing"],
  },
  langgraph: {
    label: "LangGraph SqliteSaver",
    factory: langGraph,
    workloads: ALL,
    quadratic: ({ workload, steps }) => workload === "growing" && steps > 1_000,
  },
  mastra: {
    label: "Mastra LibSQLStore",
    factory: mastra,
    workloads: ["fixed"],
    quadratic: ({ steps }) => steps > 1_000,
  },
};

/** The child: one contender, one scenario, one fresh path. */
async function child(name: string, scenario: Scenario, path: string): Promise<StepFigures> {
  const contender = CONTENDERS[name];
  if (contender === undefined) throw new Error(`unknown contender ${name}`);
  const runner = await contender.factory(path, scenario);
  collectGarbage();
  const rss = trackPeakRss();
  const rssBaseline = rss.sample();
  // After the collection, not before it: a full collection while no step is
  // running lets V8 drop the maps of the step's short-lived objects, and with
  // them the code it compiled for those maps (measured: some forty of
  // runledger's functions compiled again, the timed steps as costly as a
  // fresh process's). The warm-up's garbage is the timed steps' to collect.
  if (scenario.warmup !== undefined) await warmUp(contender, scenario, `${path}-warmup`);
  const rssSamples: number[] = [];
  let done = 0;
  const threads = otherThreadsCpuMs();
  const cpu = process.cpuUsage();
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
  const cpuMs = cpuSince(cpu);
  const threadsAfter = otherThreadsCpuMs();
  const rssPeak = rss.stop();
  return {
    contender: name,
    runs: scenario.runs,
    steps: done,
    ms,
    cpuMs,
    otherThreadsMs:
      threads === undefined || threadsAfter === undefined ? undefined : threadsAfter - threads,
    bytes: await pathSize(path),
    rssBaseline,
    rssPeak,
    rssSamples,
    durability: runner.durability,
  };
}

/** Runs `scenario.warmup` untimed steps of one run at `path`, then removes what they wrote. */
async function warmUp(contender: StepContender, scenario: Scenario, path: string): Promise<void> {
  const steps = scenario.warmup ?? 0;
  const runner = await contender.factory(path, { ...scenario, runs: 1, steps });
  await runner.startRun?.(0);
  for (let step = 0; step < steps; step++) await runner.step(0, step);
  await runner.endRun?.(0);
  await runner.close();
  await rm(path, { recursive: true, force: true });
}

/** The median over runs of this process's CPU time per step, in µs (see StepFigures.cpuMs). */
function cpuPerStep(runs: readonly { cpuMs: number; steps: number }[]): string {
  return formatRate(median(runs.map((run) => (run.cpuMs * 1000) / run.steps)));
}

/** The median over runs of the other threads' CPU time per step, in µs, or "n/a". */
function otherThreadsPerStep(
  runs: readonly { otherThreadsMs: number | undefined; steps: number }[],
): string {
  const known = runs.flatMap((run) =>
    run.otherThreadsMs === undefined ? [] : [(run.otherThreadsMs * 1000) / run.steps],
  );
  return known.length === 0 ? "n/a" : formatRate(median(known));
}

/**
 * CPU time so far of every thread of this process but the main one, in ms,
 * from /proc (utime + stime in clock ticks of 10 ms); undefined elsewhere.
 */
function otherThreadsCpuMs(): number | undefined {
  let tasks: string[];
  try {
    tasks = readdirSync("/proc/self/task");
  } catch {
    return undefined;
  }
  let ticks = 0;
  for (const task of tasks) {
    if (task === String(process.pid)) continue;
    try {
      const stat = readFileSync(`/proc/self/task/${task}/stat`, "utf8");
      // The fields after the command name (which may hold spaces): utime and stime are 14th and 15th.
      const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
      ticks += Number(fields[11]) + Number(fields[12]);
    } catch {
      // A thread that ended meanwhile.
    }
  }
  return ticks * 10;
}

function cpuSince(start: NodeJS.CpuUsage): number {
  const { user, system } = process.cpuUsage(start);
  return (user + system) / 1000;
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

// ---------------------------------------------------------------------------
// The directory curve

const DIRECTORY_ADAPTERS: Readonly<Record<string, { label: string; driver: () => Driver }>> = {
  node: { label: "adapter-node", driver: () => nodeDriver() },
  libsql: { label: "adapter-libsql", driver: () => libsqlDriver() },
};

/** Puts per untimed `apply` while filling the directory. */
const FILL_BATCH = 5_000;

interface DirectoryFigures {
  readonly files: number;
  readonly steps: number;
  readonly ms: number;
  /** CPU time over the timed steps (see StepFigures.cpuMs). */
  readonly cpuMs: number;
  /** How long filling the directory took (untimed for steps/s). */
  readonly fillMs: number;
  /** The file after the fill, and after the timed steps (file + WAL, after close). */
  readonly bytesFilled: number;
  readonly bytes: number;
}

function outPath(index: number): string {
  return `out/f-${String(index).padStart(7, "0")}.json`;
}

/**
 * One run whose directory `out/` is filled with `files` files (~200 B each,
 * in applies of FILL_BATCH puts, untimed), then `steps` timed steps each
 * adding one new file there with its event.
 */
async function directoryChild(
  adapter: string,
  files: number,
  steps: number,
  dir: string,
): Promise<DirectoryFigures> {
  const chosen = DIRECTORY_ADAPTERS[adapter];
  if (chosen === undefined) throw new Error(`unknown adapter ${adapter}`);
  await mkdir(dir, { recursive: true });
  const file = join(dir, "run.db");
  const encoder = new TextEncoder();
  const store = new RunStore({ driver: chosen.driver() });
  const fillStarted = performance.now();
  let lease = await store.open(file, { create: { workflowId: "bench", runId: "directory" } });
  for (let from = 0; from < files; from += FILL_BATCH) {
    const put: Record<string, Uint8Array> = {};
    for (let i = from; i < Math.min(files, from + FILL_BATCH); i++) {
      put[outPath(i)] = encoder.encode(output(0, i));
    }
    await lease.transact((tx) =>
      tx.workspace.apply({ put }, { event: { kind: "fill", from, status: "success" } }),
    );
  }
  await lease.release();
  const fillMs = performance.now() - fillStarted;
  const bytesFilled = await databaseSize(file);
  lease = await store.open(file);
  collectGarbage();
  const cpu = process.cpuUsage();
  const started = performance.now();
  for (let step = 0; step < steps; step++) {
    const bytes = encoder.encode(output(1, step));
    await lease.transact((tx) =>
      tx.workspace.apply(
        { put: { [outPath(files + step)]: bytes } },
        { event: { kind: "step.completed", step, status: "success" } },
      ),
    );
  }
  const ms = performance.now() - started;
  const cpuMs = cpuSince(cpu);
  await lease.release();
  await store.close();
  return { files, steps, ms, cpuMs, fillMs, bytesFilled, bytes: await databaseSize(file) };
}

// ---------------------------------------------------------------------------
// Statements and WAL frames per step

interface CountFigures {
  readonly contender: string;
  readonly workload: Workload;
  readonly steps: number;
  /** Calls reaching the port (runledger) or statements SQLite ran (both), per step. */
  readonly portCalls?: number;
  readonly statements: number;
  readonly frames: number;
  readonly pageSize: number;
  /** runledger: where the run file's bytes are (../layout.ts). */
  readonly layout?: Layout;
  /** WAL frames per step by table or index. */
  readonly byObject: Readonly<Record<string, number>>;
  /** The statements of one step, in order (runledger: the port calls). */
  readonly oneStep: readonly string[];
}

/**
 * Counts what `steps` steps of one run cost in statements and WAL frames,
 * excluding creating the run and closing it.
 * - runledger: the run is made through adapter-node with every port call
 *   recorded; the recording is replayed on a fresh file with automatic
 *   checkpoints off, and the WAL's growth over the steps' calls gives the
 *   frames (../replay.ts countWal).
 * - LangGraph: its saver on a better-sqlite3 handle with
 *   `wal_autocheckpoint = 0` and every statement traced (better-sqlite3's
 *   `verbose`, which sees the BEGIN/COMMIT of its `db.transaction` too).
 */
async function countChild(
  name: string,
  workload: Workload,
  steps: number,
  path: string,
): Promise<CountFigures> {
  const scenario: Scenario = { workload, runs: 1, steps };
  await mkdir(path, { recursive: true });
  if (name === "runledger") {
    const recording: Recording = { connections: [], staged: [] };
    const runner = await runledger(() => recordingDriver(nodeDriver(), recording))(
      join(path, "recorded"),
      scenario,
    );
    await runner.startRun?.(0);
    const calls = () => recording.connections[0] ?? [];
    const from = calls().length;
    // The second step's calls are shown (the first also reads what a lease has not seen yet).
    const second = [from, from];
    for (let step = 0; step < steps; step++) {
      await runner.step(0, step);
      if (step === 0) second[0] = calls().length;
      if (step === 1) second[1] = calls().length;
    }
    const to = calls().length;
    await runner.endRun?.(0);
    await runner.close();
    if (recording.connections.length !== 1 || recording.staged.length !== 1) {
      throw new Error(
        `expected one recorded connection and one creation, got ${recording.connections.length} and ${recording.staged.length}`,
      );
    }
    const wal = countWal(join(path, "replayed.db"), calls(), from, to, recording.staged[0]);
    return {
      contender: name,
      workload,
      steps,
      portCalls: (to - from) / steps,
      statements: wal.statements / steps,
      frames: wal.frames / steps,
      pageSize: wal.pageSize,
      byObject: perStep(wal.byObject, steps),
      oneStep: calls()
        .slice(second[0], second[1])
        .map((call) => call.sql.replace(/\s+/g, " ").slice(0, 60)),
      layout: layoutOf(join(path, "replayed.db")),
    };
  }
  if (name === "langgraph") {
    let traced: string[] = [];
    let handle: Database.Database | undefined;
    const file = join(path, "langgraph.db");
    const runner = await langGraphOn((at) => {
      handle = new Database(at, { verbose: (sql) => traced.push(String(sql)) });
      handle.pragma("wal_autocheckpoint = 0");
      return handle;
    })(file, scenario);
    await runner.startRun?.(0);
    const pageSize = Number(handle?.pragma("page_size", { simple: true }));
    traced = [];
    const before = walSize(file);
    let oneStep: string[] = [];
    let statements = 0;
    for (let step = 0; step < steps; step++) {
      await runner.step(0, step);
      if (step === 1) oneStep = traced.map((sql) => sql.replace(/\s+/g, " ").slice(0, 60));
      statements += traced.length;
      traced = [];
    }
    const after = walSize(file);
    const byObject =
      handle === undefined ? {} : framesByObject(handle, walPages(file, before, pageSize));
    await runner.close();
    return {
      contender: name,
      workload,
      steps,
      statements: statements / steps,
      frames: framesBetween(before, after, pageSize) / steps,
      pageSize,
      byObject: perStep(byObject, steps),
      oneStep,
    };
  }
  throw new Error(`cannot count ${name}`);
}

/** One row of the file-layout table. */
function layoutRow(workload: Workload, counted: CountFigures): string[] {
  const layout = counted.layout as Layout;
  const bytes = layout.bytesByObject;
  const file = Object.values(bytes).reduce((sum, n) => sum + n, 0);
  const nodes = Object.values(layout.nodeBytesPerStep).reduce((sum, n) => sum + n, 0);
  return [
    workload,
    formatMib(file),
    formatMib(bytes.workspace_object ?? 0),
    formatMib(bytes.workspace_object_by_id ?? 0),
    formatMib((bytes.journal ?? 0) + (bytes.sqlite_autoindex_journal_1 ?? 0)),
    String(nodes),
    Object.entries(layout.nodeBytesPerStep)
      .map(([level, n]) => `${level.replace("level ", "L")} ${n}`)
      .join(", "),
    String(layout.nodeBytesStoredPerStep),
    `${Math.round(layout.deltaShare * 100)}%, ≤ ${layout.deepestChain}`,
    String(layout.fileBytesPerStep),
  ];
}

function perStep(counts: Readonly<Record<string, number>>, steps: number): Record<string, number> {
  return Object.fromEntries(
    Object.entries(counts)
      .sort(([, a], [, b]) => b - a)
      .map(([name, count]) => [name, Math.round((count / steps) * 100) / 100]),
  );
}

// ---------------------------------------------------------------------------
// The suite

const SCENARIOS = (quick: boolean): Scenario[] =>
  quick
    ? [
        { workload: "fixed", runs: 1, steps: 1_000 },
        { workload: "fixed", runs: 1, steps: 1_000, warmup: 1_000 },
        { workload: "fixed", runs: 20, steps: 50 },
        { workload: "growing", runs: 1, steps: 1_000 },
        { workload: "history", runs: 1, steps: 100 },
      ]
    : [
        { workload: "fixed", runs: 1, steps: 5_000 },
        { workload: "fixed", runs: 1, steps: 5_000, warmup: 5_000 },
        { workload: "fixed", runs: 100, steps: 50 },
        { workload: "growing", runs: 1, steps: 5_000 },
        { workload: "history", runs: 1, steps: 300 },
      ];

const DIRECTORY_SIZES = [100, 1_000, 10_000, 100_000];

const PARTS = ["fixed", "growing", "history", "curve", "counts"] as const;

/**
 * Which parts of the suite run: BENCH_STEPS=growing,curve (a comma-separated
 * subset of PARTS) runs only those; unset, all of them.
 */
function stepsParts(): Set<string> {
  const chosen = process.env.BENCH_STEPS?.split(",").map((part) => part.trim()) ?? [...PARTS];
  const unknown = chosen.filter((part) => !(PARTS as readonly string[]).includes(part));
  if (unknown.length > 0) {
    throw new Error(`BENCH_STEPS: unknown part ${unknown.join(", ")}; parts: ${PARTS.join(", ")}`);
  }
  return new Set(chosen);
}

const WORKLOAD_TITLES: Record<Workload, string> = {
  fixed: "fixed state (event + ~200 B file)",
  growing: "growing state (event + a new ~300 B message file in one directory)",
  history: "history (event + one ~1.5 MB file rewritten, +~300 B per step)",
};

export const stepsSuite: Suite = {
  name: "steps",
  summary:
    "workflow steps/s, file size, peak RSS, statements and WAL frames per step vs LangGraph SqliteSaver and Mastra LibSQLStore; the directory curve",
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
        const path = contender.filePerRun ? `${context.freshFile()}-runs` : context.freshFile();
        await runChild<StepFigures>(import.meta.url, [name, "fixed", "1", "10", path]);
        await rm(path, { recursive: true, force: true });
        usable.push([name, contender]);
      } catch (error) {
        failures.push(`NOT RUN ${contender.label}: ${(error as Error).message}`);
      }
    }
    const parts = stepsParts();
    const curveSteps = context.quick ? 100 : 500;
    const oneSteps: string[] = [];
    const countSteps = context.quick ? 1_000 : 5_000;
    for (const scenario of SCENARIOS(context.quick).filter((s) => parts.has(s.workload))) {
      // A contender whose step cost grows with its run is left out of a warmed scenario:
      // its warm-up would make the timed steps the slow end of one long run.
      const warmed = { ...scenario, steps: scenario.steps + (scenario.warmup ?? 0) };
      const inScenario = usable.filter(
        ([, contender]) =>
          contender.workloads.includes(scenario.workload) &&
          (scenario.warmup === undefined || !(contender.quadratic?.(warmed) ?? false)),
      );
      const figures = new Map<string, StepFigures[]>();
      const once = new Set(
        inScenario
          .filter(([, contender]) => contender.quadratic?.(scenario) ?? false)
          .map(([, contender]) => contender.label),
      );
      const contenders = inScenario.map(([name, { label, filePerRun }]) => ({
        label,
        async run(file: string) {
          const path = filePerRun ? `${file}-runs` : file;
          try {
            const result = await runChild<StepFigures>(import.meta.url, [
              name,
              scenario.workload,
              String(scenario.runs),
              String(scenario.steps),
              path,
              String(scenario.warmup ?? 0),
            ]);
            figures.set(name, [...(figures.get(name) ?? []), result]);
            durability.set(label, result.durability);
            return { ops: result.steps, ns: BigInt(Math.round(result.ms * 1e6)) };
          } finally {
            if (filePerRun) await rm(path, { recursive: true, force: true });
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
      const withFloor = inScenario.some(([name]) => name === "raw-replay");
      const rows: string[][] = [];
      for (const [name, { label }] of inScenario) {
        const sample = byLabel.get(label) as Sample;
        // The untimed round's figures are left out.
        const runsOf = (figures.get(name) ?? []).slice(once.has(label) ? 0 : 1);
        const peak = Math.max(...runsOf.map((f) => f.rssPeak));
        const baseline = Math.min(...runsOf.map((f) => f.rssBaseline));
        const last = runsOf.at(-1) as StepFigures;
        const trail = last.rssSamples.map((bytes) => formatMib(bytes).replace(/\.\d$/, ""));
        const row = [
          label,
          formatRate(sample.median),
          cpuPerStep(runsOf),
          otherThreadsPerStep(runsOf),
          `${(sample.median / langGraphRate).toFixed(2)}×`,
          ...(withFloor ? [`${(sample.median / rawRate).toFixed(2)}×`] : []),
          formatMib(last.bytes),
          formatMib(baseline),
          formatMib(peak),
          trail.length > 6 ? `${trail.slice(0, 3).join(", ")} … ${trail.at(-1)}` : trail.join(", "),
          once.has(label) ? "1 run" : `±${(spread(sample) * 100).toFixed(1)}%`,
        ];
        rows.push(row);
        cases.push({ scenario, contender: name, label, sample, runs: runsOf });
      }
      tables.push({
        title: `${WORKLOAD_TITLES[scenario.workload]}, ${scenario.runs} run${scenario.runs > 1 ? "s" : ""} × ${scenario.steps.toLocaleString("en-US")} steps${scenario.warmup === undefined ? "" : ` after ${scenario.warmup.toLocaleString("en-US")} untimed steps in the same process (warm)`} (steps/s; sizes and RSS in MiB, RSS over the timed runs)`,
        headers: [
          "contender",
          "steps/s",
          "CPU µs/step",
          "of it, other threads",
          "vs LangGraph",
          ...(withFloor ? ["vs raw replay"] : []),
          "file size",
          "RSS base",
          "peak RSS",
          "RSS per 1,000 steps",
          "spread",
        ],
        rows,
      });
    }

    if (parts.has("curve")) {
      // The directory curve: each (adapter, n) a process of its own, interleaved.
      const curveSizes = context.quick ? DIRECTORY_SIZES.slice(0, 3) : DIRECTORY_SIZES;
      const curveFigures = new Map<string, DirectoryFigures[]>();
      const curveContenders = Object.entries(DIRECTORY_ADAPTERS).flatMap(([adapter, { label }]) =>
        curveSizes.map((files) => ({
          label: `${label}, n = ${files.toLocaleString("en-US")}`,
          async run(file: string) {
            const dir = `${file}-dir`;
            try {
              const result = await runChild<DirectoryFigures>(import.meta.url, [
                "directory",
                adapter,
                String(files),
                String(curveSteps),
                dir,
              ]);
              const key = `${adapter} ${files}`;
              curveFigures.set(key, [...(curveFigures.get(key) ?? []), result]);
              return { ops: result.steps, ns: BigInt(Math.round(result.ms * 1e6)) };
            } finally {
              await rm(dir, { recursive: true, force: true });
            }
          },
        })),
      );
      // Every run is a fresh process that fills its directory before timing: no untimed round.
      const curve = await interleave({ ...context, runs }, curveContenders, { warmupRuns: 0 });
      const curveRows: string[][] = [];
      for (const [adapter, { label }] of Object.entries(DIRECTORY_ADAPTERS)) {
        const first = curve.find((sample) => sample.label === `${label}, n = 100`);
        for (const files of curveSizes) {
          const sample = curve.find(
            (s) => s.label === `${label}, n = ${files.toLocaleString("en-US")}`,
          ) as Sample;
          const runsOf = curveFigures.get(`${adapter} ${files}`) ?? [];
          curveRows.push([
            label,
            files.toLocaleString("en-US"),
            formatRate(sample.median),
            cpuPerStep(runsOf),
            `${(sample.median / (first?.median ?? Number.NaN)).toFixed(2)}×`,
            `${(median(runsOf.map((f) => f.fillMs)) / 1000).toFixed(1)}`,
            formatMib(runsOf.at(-1)?.bytesFilled ?? 0),
            formatMib(runsOf.at(-1)?.bytes ?? 0),
            `±${(spread(sample) * 100).toFixed(1)}%`,
          ]);
          cases.push({ directory: { adapter, files, steps: curveSteps }, sample, runs: runsOf });
        }
      }
      tables.push({
        title: `the directory curve: ${curveSteps} steps each adding one new ~200 B file (with its event) to a directory already holding n files (steps/s; fill in s, sizes in MiB)`,
        headers: [
          "adapter",
          "n",
          "steps/s",
          "CPU µs/step",
          "vs n = 100",
          "fill (untimed)",
          "size filled",
          "size after",
          "spread",
        ],
        rows: curveRows,
      });
    }
    if (parts.has("counts")) {
      // Statements and WAL frames per step.
      const countRows: string[][] = [];
      const layoutRows: string[][] = [];
      for (const workload of ["fixed", "growing"] as const) {
        for (const name of ["runledger", "langgraph"]) {
          if (name === "langgraph" && !usable.some(([n]) => n === "langgraph")) continue;
          const path = `${context.freshFile()}-count`;
          try {
            const counted = await runChild<CountFigures>(import.meta.url, [
              "count",
              name,
              workload,
              String(countSteps),
              path,
            ]);
            countRows.push([
              name === "runledger"
                ? "runledger (adapter-node's statements)"
                : "LangGraph SqliteSaver",
              workload,
              counted.portCalls === undefined ? "" : counted.portCalls.toFixed(2),
              counted.statements.toFixed(2),
              counted.frames.toFixed(2),
              String(counted.pageSize),
              Object.entries(counted.byObject)
                .map(([object, frames]) => `${object} ${frames}`)
                .join(", "),
            ]);
            if (counted.layout !== undefined) layoutRows.push(layoutRow(workload, counted));
            if (workload === "fixed") {
              oneSteps.push(`one ${workload} step, ${name}: ${counted.oneStep.join(" | ")}`);
            }
            cases.push({ count: counted });
          } finally {
            await rm(path, { recursive: true, force: true });
          }
        }
      }
      tables.push({
        title: `statements and WAL frames per step, over ${countSteps.toLocaleString("en-US")} steps of one run (creating the run excluded; automatic checkpoints off)`,
        headers: [
          "contender",
          "workload",
          "port calls",
          "statements",
          "WAL frames",
          "page size",
          "frames by table/index",
        ],
        rows: countRows,
      });
      tables.push({
        title: `where runledger's file is, after ${countSteps.toLocaleString("en-US")} steps of one run (MiB; new nodes per step in bytes, full size by level, then as stored: whole or as deltas onto the node each replaced)`,
        headers: [
          "workload",
          "file",
          "objects",
          "object key index",
          "journal + index",
          "new nodes / step",
          "by level",
          "nodes stored / step",
          "as deltas, deepest chain",
          "files / step",
        ],
        rows: layoutRows,
      });
    }
    return {
      notes: [
        ...[...durability].map(([label, text]) => `durability ${label}: ${text}`),
        "fixed step: runledger = lease.transact(tx => tx.workspace.apply({ put: { state/output.json: ~200 B } }, { event })) (one journal event); LangGraph = saver.put(checkpoint with the ~200 B output) + saver.putWrites([[output, ~200 B]]); Mastra = persistWorkflowSnapshot(snapshot whose context gains the step's result)",
        "growing step: runledger puts a new messages/m-NNNNNN.json (~300 B) with its event; LangGraph puts a checkpoint whose messages channel holds every message so far (as add_messages does) + putWrites of the new message",
        "history step: runledger puts history.jsonl (5,000 earlier messages ≈ 1.5 MB at the start, +1 line per step) with its event; LangGraph puts a checkpoint whose history channel holds the same text + putWrites of the new line only",
        "raw replay: the scenario run once through adapter-node with every statement recorded (untimed), then each run's statements replayed through better-sqlite3 directly (prepared once, synchronous; the run created whole, as adapter-node creates it): the same rows with no core above SQLite; replayed at the end of each run, so its RSS samples mean nothing",
        "raw libsql replay: the same, the scenario recorded through adapter-libsql and replayed through libsql's own synchronous API (the engine under @libsql/client; the run created in place and its WAL folded in before the close, as adapter-libsql does): adapter-libsql's floor",
        "replay + least work: the raw replay, with before each step's transaction the JavaScript a step of runledger's v1 format cannot skip, done by hand (bench/src/least-work.ts: the output encoded, its SHA-256, two one-entry nodes built and hashed, the event's id, JSON text and chained SHA-256): the floor of any implementation of the format on this machine",
        "one-row floor: better-sqlite3 writing the step's event and output (growing: the new message) as one row per BEGIN IMMEDIATE … COMMIT (prepared once, one file): the least any store giving each step its own transaction can write, so its 'vs LangGraph' is the ceiling of every implementation's on this machine",
        "runledger writes one file per run (size = all of them); LangGraph and Mastra one file per contender; runledger's timing includes creating each run (store.open with create) and releasing it",
        `each run in a process of its own (peak RSS is that run's); one discarded round, then the contenders interleaved over ${runs} runs; a scenario whose step cost grows with the run for that contender (LangGraph growing above 1,000 steps, Mastra above 1,000) is timed once, without the discarded round; a warm scenario's process first runs as many untimed steps of another run (a file of its own, removed before timing, its RSS in the peak) — what a long-running engine's next run sees — and leaves out a contender whose step cost grows with its run (Mastra)`,
        `directory curve: each run a fresh process that creates a run, fills out/ with n ~200 B files in applies of ${FILL_BATCH.toLocaleString("en-US")} puts (untimed), reopens it, then times ${curveSteps} steps each adding out/f-<n+i>.json with its event; interleaved over ${runs} runs, no discarded round`,
        "counts: runledger's port calls are what reached the driver (a script counts once); its statements and frames come from replaying the recording on a fresh file with wal_autocheckpoint = 0 (statements traced by better-sqlite3, frames = WAL growth / (24 + page size)); LangGraph runs on its own handle with wal_autocheckpoint = 0, every statement traced",
        "CPU µs/step: the child process's own CPU time (user + system, every thread) over the timed span, per step, median over the runs; unlike steps/s it leaves out time spent waiting for a core on a shared machine (it does include SQLite's work, which runs in-process)",
        "of it, other threads: the part of that CPU time spent on threads other than the main one (from /proc/self/task, in 10 ms ticks; n/a off Linux): every contender's SQLite runs on the main thread, so this is V8's optimizing compiler and its collector's helpers — a fresh process compiles the step's code while it runs it",
        ...oneSteps,
        ...failures,
      ],
      tables,
      data: { cases },
    };
  },
};

if (isChildEntry(import.meta.url)) {
  const [mode, ...rest] = process.argv.slice(2);
  if (mode === "directory") {
    const [adapter, files, steps, path] = rest;
    reportToParent(
      await directoryChild(adapter as string, Number(files), Number(steps), path as string),
    );
  } else if (mode === "record") {
    const [workload, runs, steps, dir, file] = rest;
    const scenario = { workload: workload as Workload, runs: Number(runs), steps: Number(steps) };
    reportToParent(await recordChild(scenario, dir as string, file as string));
  } else if (mode === "count") {
    const [name, workload, steps, path] = rest;
    reportToParent(
      await countChild(name as string, workload as Workload, Number(steps), path as string),
    );
  } else {
    const [workload, runs, steps, path, warmup] = rest;
    reportToParent(
      await child(
        mode as string,
        {
          workload: workload as Workload,
          runs: Number(runs),
          steps: Number(steps),
          ...(Number(warmup ?? 0) > 0 ? { warmup: Number(warmup) } : {}),
        },
        path as string,
      ),
    );
  }
}
