/**
 * LangGraph's checkpointer, side by side (issue 30): a `StateGraph` of one
 * node driven through `invoke`, 1,000 steps a thread, with LangGraph's
 * SqliteSaver and with RunledgerSaver on adapter-node, both in WAL with
 * synchronous=NORMAL. Two workloads: a fixed-size state (one ~270-byte
 * channel rewritten every step) and a growing one (a messages channel that
 * gains one ~300-byte message a step). Each sample is a process of its own
 * (its CPU time is its own work alone), the contenders alternated in rounds;
 * the tables show medians. Also: the thread's file size, and a cold
 * `getTuple` — a new process opening the finished thread and reading its
 * newest checkpoint.
 */
import { mkdtempSync, readdirSync, rmSync, statSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import {
  formatRate,
  isChildEntry,
  median,
  reportToParent,
  runChild,
  type Suite,
  type Table,
} from "../harness.js";

type Saver = "sqlite" | "runledger";
type Workload = "fixed" | "growing";

interface Figures {
  readonly saver: Saver;
  readonly workload: Workload;
  readonly steps: number;
  readonly stepsPerSecond: number;
  readonly cpuMsPerStep: number;
  readonly bytes: number;
  readonly coldGetTupleMs: number;
}

const SAVERS: readonly Saver[] = ["sqlite", "runledger"];
const LABEL: Record<Saver, string> = {
  sqlite: "LangGraph SqliteSaver",
  runledger: "RunledgerSaver (adapter-node)",
};

export const langgraphSuite: Suite = {
  name: "langgraph",
  summary:
    "a LangGraph StateGraph through invoke: RunledgerSaver vs SqliteSaver, fixed and growing state",
  async run(context) {
    const steps = context.quick ? 100 : 1_000;
    const rounds = context.quick ? 1 : Math.max(3, context.runs);
    const samples: Figures[] = [];
    for (const workload of ["fixed", "growing"] as const) {
      for (let round = 0; round < rounds; round++) {
        const order = round % 2 === 0 ? SAVERS : [...SAVERS].reverse();
        for (const saver of order) {
          samples.push(await runChild<Figures>(import.meta.url, [saver, workload, String(steps)]));
        }
      }
    }
    const of = (saver: Saver, workload: Workload, pick: (f: Figures) => number) =>
      median(samples.filter((f) => f.saver === saver && f.workload === workload).map(pick));
    const tables: Table[] = (["fixed", "growing"] as const).map((workload) => {
      const rate = (saver: Saver) => of(saver, workload, (f) => f.stepsPerSecond);
      const size = (saver: Saver) => of(saver, workload, (f) => f.bytes);
      const cold = (saver: Saver) => of(saver, workload, (f) => f.coldGetTupleMs);
      const ratio = rate("runledger") / rate("sqlite");
      const sizeRatio = size("runledger") / size("sqlite");
      const goals =
        workload === "fixed"
          ? [`≥ 1.0× ${ratio >= 1 ? "met" : "MISSED"}`, "", ""]
          : [
              `≥ 1.0× ${ratio >= 1 ? "met" : "MISSED"}`,
              `≤ 1/20 ${sizeRatio <= 1 / 20 ? "met" : "MISSED"}`,
              `≤ SqliteSaver's ${cold("runledger") <= cold("sqlite") ? "met" : "MISSED"}`,
            ];
      return {
        title: `${workload === "fixed" ? "fixed-size state" : "growing messages"}: ${steps.toLocaleString("en-US")} steps through invoke, median of ${rounds}`,
        headers: ["saver", "steps/s", "CPU ms a step", "vs SqliteSaver", "file", "cold getTuple"],
        rows: [
          ...SAVERS.map((saver) => [
            LABEL[saver],
            formatRate(rate(saver)),
            of(saver, workload, (f) => f.cpuMsPerStep).toFixed(2),
            saver === "sqlite" ? "1.00×" : `${ratio.toFixed(2)}×`,
            `${(size(saver) / 1e6).toFixed(1)} MB`,
            `${cold(saver).toFixed(1)} ms`,
          ]),
          ["goal", "", "", goals[0]!, goals[1]!, goals[2]!],
        ],
      };
    });
    return {
      notes: [
        "durability: journal_mode=WAL, synchronous=NORMAL on both",
        "each sample is one process: a new thread, every step an invoke of a one-node graph",
      ],
      tables,
      data: { steps, rounds, samples },
    };
  },
};

/** One sample: `steps` invokes on a new thread, then a cold getTuple in a fresh saver. */
async function sample(saver: Saver, workload: Workload, steps: number): Promise<Figures> {
  const { Annotation, END, START, StateGraph } = await import("@langchain/langgraph");
  const dir = mkdtempSync(join(tmpdir(), "runledger-bench-langgraph-"));
  const State = Annotation.Root({
    messages: Annotation<unknown[]>({ reducer: (a, b) => a.concat(b), default: () => [] }),
    output: Annotation<string>(),
  });
  const text = "x".repeat(250);
  const graph = new StateGraph(State)
    .addNode("step", (state: { messages: unknown[] }) =>
      workload === "growing"
        ? { messages: [{ role: "ai", id: `m${state.messages.length}`, content: text }] }
        : { output: `${text}-${state.messages.length}-${Math.random()}` },
    )
    .addEdge(START, "step")
    .addEdge("step", END);
  const config = { configurable: { thread_id: "thread" } };
  const open = await openSaver(saver, dir);
  const app = graph.compile({ checkpointer: open.checkpointer as never });
  const cpu = process.cpuUsage();
  const started = performance.now();
  for (let i = 0; i < steps; i++) await app.invoke({}, config);
  const ms = performance.now() - started;
  const used = process.cpuUsage(cpu);
  await open.close();
  const bytes = readdirSync(dir).reduce((sum, name) => sum + statSync(join(dir, name)).size, 0);
  const again = await openSaver(saver, dir);
  const coldStart = performance.now();
  const tuple = await again.checkpointer.getTuple(config);
  const coldGetTupleMs = performance.now() - coldStart;
  if (tuple === undefined) throw new Error(`${saver}: the finished thread has no checkpoint`);
  const messages = (tuple.checkpoint.channel_values as { messages?: unknown[] }).messages ?? [];
  if (workload === "growing" && messages.length !== steps) {
    throw new Error(
      `${saver}: the newest checkpoint holds ${messages.length} messages, not ${steps}`,
    );
  }
  await again.close();
  rmSync(dir, { recursive: true, force: true });
  return {
    saver,
    workload,
    steps,
    stepsPerSecond: steps / (ms / 1000),
    cpuMsPerStep: (used.user + used.system) / 1000 / steps,
    bytes,
    coldGetTupleMs,
  };
}

interface OpenSaver {
  readonly checkpointer: {
    getTuple(config: object): Promise<{ checkpoint: { channel_values: unknown } } | undefined>;
  };
  close(): Promise<void>;
}

async function openSaver(saver: Saver, dir: string): Promise<OpenSaver> {
  if (saver === "sqlite") {
    const { SqliteSaver } = await import("@langchain/langgraph-checkpoint-sqlite");
    const { default: Database } = await import("better-sqlite3");
    const db = new Database(join(dir, "sqlite.db"));
    db.pragma("journal_mode = WAL");
    db.pragma("synchronous = NORMAL");
    const checkpointer = new SqliteSaver(db);
    return {
      checkpointer: checkpointer as unknown as OpenSaver["checkpointer"],
      close: async () => {
        db.close();
      },
    };
  }
  const { nodeDriver } = await import("@runledger/adapter-node");
  const { RunStore } = await import("@runledger/core");
  const { RunledgerSaver } = await import("@runledger/langgraph");
  const store = new RunStore({ driver: nodeDriver() });
  const checkpointer = new RunledgerSaver({ store, directory: dir });
  return {
    checkpointer: checkpointer as unknown as OpenSaver["checkpointer"],
    close: async () => {
      await checkpointer.close();
      await store.close();
    },
  };
}

if (isChildEntry(import.meta.url)) {
  const [saver, workload, steps] = process.argv.slice(2);
  reportToParent(await sample(saver as Saver, workload as Workload, Number(steps)));
}
