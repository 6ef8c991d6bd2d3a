/**
 * @runledger/langgraph: a LangGraph JS checkpointer (`BaseCheckpointSaver`)
 * that keeps each thread in a runledger run (docs/langgraph.md).
 */
export { threadFileName, threadLocation, threadNamespace } from "./location.js";
export { RunledgerSaver, type RunledgerSaverOptions } from "./saver.js";
