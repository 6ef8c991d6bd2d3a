// A quick side-by-side of RunledgerSaver and SqliteSaver (the bench/ suite is `npm run bench -- langgraph`):
// node scripts/quick-bench.mjs <sqlite|runledger|memory> <fixed|growing> [steps], after a build
// (memory: LangGraph's MemorySaver, the engine's own cost a step). coldGetTupleMs is the first
// getTuple of a new saver (a new connection); coldAgainMs the median of five more, each on its own
// new connection, once that code has run.
import { mkdtempSync, readdirSync, statSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Annotation, END, START, StateGraph } from "@langchain/langgraph";
import { SqliteSaver } from "@langchain/langgraph-checkpoint-sqlite";
import { nodeDriver } from "@runledger/adapter-node";
import { RunStore } from "@runledger/core";
import { RunledgerSaver } from "@runledger/langgraph";
import Database from "better-sqlite3";

const [which, workload, stepsArg] = process.argv.slice(2);
const steps = Number(stepsArg ?? 1000);
const dir = mkdtempSync(join(tmpdir(), "lgq-"));
const State = Annotation.Root({
  messages: Annotation({ reducer: (a, b) => a.concat(b), default: () => [] }),
  output: Annotation(),
});
const text = "x".repeat(250);
const graph = new StateGraph(State)
  .addNode("step", (s) =>
    workload === "growing"
      ? { messages: [{ role: "ai", id: `m${s.messages.length}`, content: text }] }
      : { output: `${text}-${Math.random()}` },
  )
  .addEdge(START, "step")
  .addEdge("step", END);
let saver, store, file, db;
if (which === "memory") {
  const { MemorySaver } = await import("@langchain/langgraph");
  saver = new MemorySaver();
} else if (which === "sqlite") {
  file = join(dir, "s.db");
  db = new Database(file);
  db.pragma("journal_mode = WAL");
  db.pragma("synchronous = NORMAL");
  saver = new SqliteSaver(db);
} else {
  store = new RunStore({ driver: nodeDriver() });
  saver = new RunledgerSaver({ store, directory: dir });
}
const app = graph.compile({ checkpointer: saver });
const config = { configurable: { thread_id: "t" } };
const c0 = process.cpuUsage();
const t0 = performance.now();
for (let i = 0; i < steps; i++) await app.invoke(workload === "growing" ? {} : {}, config);
const ms = performance.now() - t0;
const cpu = process.cpuUsage(c0);
if (which === "memory") {
  console.log(
    JSON.stringify({
      which,
      stepsPerS: +(steps / (ms / 1000)).toFixed(1),
      cpuMsPerStep: +((cpu.user + cpu.system) / 1000 / steps).toFixed(2),
    }),
  );
  process.exit(0);
}
if (which !== "sqlite") {
  await saver.close();
  await store.close();
  file = join(dir, "t.db");
} else db.close();
const size = readdirSync(dir).reduce((n, f) => n + statSync(join(dir, f)).size, 0);
// cold getTuple: a new store/connection
async function coldGetTuple() {
  if (which === "sqlite") {
    const d2 = new Database(file);
    const s2 = new SqliteSaver(d2);
    const t = performance.now();
    await s2.getTuple(config);
    const ms = performance.now() - t;
    d2.close();
    return ms;
  }
  const st = new RunStore({ driver: nodeDriver() });
  const s2 = new RunledgerSaver({ store: st, directory: dir });
  const t = performance.now();
  const tu = await s2.getTuple(config);
  const ms = performance.now() - t;
  if (workload === "growing" && tu.checkpoint.channel_values.messages.length !== steps)
    throw new Error("bad");
  await s2.close();
  await st.close();
  return ms;
}
const cold = await coldGetTuple();
const again = [];
for (let i = 0; i < 5; i++) again.push(await coldGetTuple());
again.sort((a, b) => a - b);
console.log(
  JSON.stringify({
    which,
    workload,
    steps,
    stepsPerS: +(steps / (ms / 1000)).toFixed(1),
    cpuMsPerStep: +((cpu.user + cpu.system) / 1000 / steps).toFixed(2),
    sizeMB: +(size / 1e6).toFixed(2),
    coldGetTupleMs: +cold.toFixed(1),
    coldAgainMs: +again[2].toFixed(1),
  }),
);
