/**
 * Time travel: the history a graph leaves, and a run from one of its past
 * checkpoints, are the same on RunledgerSaver as on LangGraph's SqliteSaver.
 */
import { Annotation, type BaseCheckpointSaver, END, START, StateGraph } from "@langchain/langgraph";
import { SqliteSaver } from "@langchain/langgraph-checkpoint-sqlite";
import { RunStore } from "@runledger/core";
import { afterAll, describe, expect, it } from "vitest";
import { RunledgerSaver } from "../src/index.js";
import { BACKENDS, tempDirectory } from "./support/backends.js";
import { expectEveryFileVerifies } from "./support/verify.js";

const State = Annotation.Root({
  log: Annotation<string[]>({ reducer: (a, b) => a.concat(b), default: () => [] }),
  count: Annotation<number>({ reducer: (a, b) => a + b, default: () => 0 }),
});

const graph = new StateGraph(State)
  .addNode("plan", (state) => ({ log: [`plan ${state.count}`], count: 1 }))
  .addNode("act", (state) => ({ log: [`act ${state.count}`], count: 10 }))
  .addEdge(START, "plan")
  .addEdge("plan", "act")
  .addEdge("act", END);

/** What a history says, without the ids and timestamps that differ from run to run. */
interface Step {
  values: unknown;
  next: readonly string[];
  step: unknown;
  source: unknown;
}

async function travel(
  checkpointer: BaseCheckpointSaver,
): Promise<{ before: Step[]; after: Step[] }> {
  const app = graph.compile({ checkpointer });
  const config = { configurable: { thread_id: "travel" } };
  await app.invoke({ log: ["first"] }, config);
  await app.invoke({ log: ["second"] }, config);
  const history = async () => {
    const steps: Step[] = [];
    for await (const state of app.getStateHistory(config)) {
      steps.push({
        values: state.values,
        next: state.next,
        step: state.metadata?.step,
        source: state.metadata?.source,
      });
    }
    return steps;
  };
  const before = await history();
  // Back to the first run, just before "act", and on from there.
  let past: Parameters<typeof app.invoke>[1] | undefined;
  for await (const state of app.getStateHistory(config)) {
    if (state.next[0] === "act" && (state.values as { count: number }).count === 1) {
      past = state.config;
    }
  }
  expect(past).toBeDefined();
  await app.invoke(null, past);
  return { before, after: await history() };
}

describe("time travel", () => {
  const directories: { path: string; remove(): void }[] = [];
  afterAll(() => {
    for (const directory of directories) directory.remove();
  });

  for (const backend of BACKENDS) {
    it(`gives SqliteSaver's history and fork on ${backend.name}, and every file verifies`, async () => {
      const expected = await travel(SqliteSaver.fromConnString(":memory:"));
      const directory = tempDirectory();
      directories.push(directory);
      const store = new RunStore({ driver: backend.driver() });
      const saver = new RunledgerSaver({ store, directory: directory.path });
      const actual = await travel(saver);
      await saver.close();
      await store.close();
      expect(actual.before.length).toBe(8);
      expect(actual.after.length).toBe(10);
      expect(actual).toStrictEqual(expected);
      expect(await expectEveryFileVerifies(backend.driver(), directory.path)).toBe(1);
    });
  }
});
