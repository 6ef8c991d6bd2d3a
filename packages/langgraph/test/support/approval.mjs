// A graph that stops for a human's approval, run in a process of its own:
// `node approval.mjs <directory> start` runs it until the interrupt, and
// `node approval.mjs <directory> resume <answer>` resumes it from the thread's
// file. Each prints its final state as one JSON line.
import { Annotation, Command, END, interrupt, START, StateGraph } from "@langchain/langgraph";
import { nodeDriver } from "@runledger/adapter-node";
import { RunStore } from "@runledger/core";
import { RunledgerSaver } from "@runledger/langgraph";

const State = Annotation.Root({
  messages: Annotation({ reducer: (a, b) => a.concat(b), default: () => [] }),
  approved: Annotation(),
});

const graph = new StateGraph(State)
  .addNode("draft", () => ({ messages: [{ role: "ai", text: "a draft" }] }))
  .addNode("ask", () => {
    const answer = interrupt({ question: "send the draft?" });
    return { approved: answer === "yes", messages: [{ role: "human", text: answer }] };
  })
  .addNode("send", (state) => ({
    messages: [{ role: "ai", text: state.approved ? "sent" : "dropped" }],
  }))
  .addEdge(START, "draft")
  .addEdge("draft", "ask")
  .addEdge("ask", "send")
  .addEdge("send", END);

const [directory, step, answer] = process.argv.slice(2);
const store = new RunStore({ driver: nodeDriver() });
const checkpointer = new RunledgerSaver({ store, directory });
const app = graph.compile({ checkpointer });
const config = { configurable: { thread_id: "approval" } };
const result =
  step === "start"
    ? await app.invoke({ messages: [{ role: "human", text: "write it" }] }, config)
    : await app.invoke(new Command({ resume: answer }), config);
const state = await app.getState(config);
console.log(
  JSON.stringify({ messages: result.messages, next: state.next, interrupts: result.__interrupt__ }),
);
await checkpointer.close();
await store.close();
