/**
 * What a checkpoint costs on a libSQL server: the saver's writes are
 * optimistic transactions (src/batch.ts), so once the saver knows a thread,
 * a `put` reaches the server in two requests — BEGIN with the read of the
 * parent checkpoint's root (its channels are copied from there), then the
 * checkpoint's event, tree nodes and COMMIT, whose answers are not waited
 * for one by one — and a `put` with its `putWrites` beside it in two too
 * (an ordinary transaction: three). Counted over http, where each request
 * passes a recording proxy (recordHttpRequests, of @runledger/conformance/sqld).
 */
import { emptyCheckpoint } from "@langchain/langgraph-checkpoint";
import { libsqlDriver } from "@runledger/adapter-libsql";
import {
  recordHttpRequests,
  resolveLocalhostSubdomains,
  startSqld,
} from "@runledger/conformance/sqld";
import { RunStore } from "@runledger/core";
import { afterAll, describe, expect, it } from "vitest";
import { RunledgerSaver, threadNamespace } from "../src/index.js";
import { expectRunVerifies } from "./support/verify.js";

resolveLocalhostSubdomains();
const server = await startSqld({ namespaces: true });
afterAll(() => server.stop());

/** Every request sent to the server at the recorder's URLs. */
const recorder = await recordHttpRequests(server);
const { requestsOf } = recorder;
afterAll(() => recorder.stop());

/** A checkpoint after `parent` (or the first), holding `messages` in one channel. */
function checkpointAfter(step: number, messages: string[]) {
  const checkpoint = emptyCheckpoint();
  checkpoint.id = `00000000-0000-6000-8000-${String(step).padStart(12, "0")}`;
  checkpoint.channel_values = { messages };
  checkpoint.channel_versions = { messages: step };
  return checkpoint;
}

describe("RunledgerSaver on sqld over http: requests a checkpoint costs", () => {
  it("once the saver knows the thread, a put is two requests, and a put with its writes two too", async () => {
    const store = new RunStore({ driver: libsqlDriver({ adminUrl: server.adminUrl as string }) });
    const locate = (threadId: string) =>
      recorder.namespaceUrl(`requests-${threadNamespace(threadId)}`);
    const saver = new RunledgerSaver({ store, locate });
    try {
      const thread = { configurable: { thread_id: "t1", checkpoint_ns: "" } };
      const metadata = { source: "loop" as const, step: 0, parents: {} };
      let config = await saver.put(thread, checkpointAfter(1, ["a"]), metadata, { messages: 1 });
      const second = await requestsOf(async () => {
        config = await saver.put(config, checkpointAfter(2, ["a", "b"]), metadata, {
          messages: 2,
        });
      });
      expect(second).toHaveLength(2);
      expect(second[0]).toContain("BEGIN IMMEDIATE");
      expect(second[0]).toContain("SELECT root_id, root_node FROM journal WHERE sequence = ?");
      for (const part of ["INSERT INTO journal", "COMMIT"]) expect(second[1]).toContain(part);
      const together = await requestsOf(() =>
        Promise.all([
          saver.put(config, checkpointAfter(3, ["a", "b", "c"]), metadata, { messages: 3 }),
          saver.putWrites(config, [["messages", "d"]], "task-1"),
        ]),
      );
      expect(together).toHaveLength(2);
      expect(together[1]).toContain("COMMIT");
      const tuple = await saver.getTuple({
        configurable: {
          thread_id: "t1",
          checkpoint_ns: "",
          checkpoint_id: checkpointAfter(2, []).id,
        },
      });
      expect(tuple?.checkpoint.channel_values).toStrictEqual({ messages: ["a", "b"] });
      expect(tuple?.pendingWrites).toStrictEqual([["task-1", "messages", "d"]]);
      await saver.close();
      await expectRunVerifies(store, locate("t1"));
    } finally {
      await saver.close();
      await store.close();
    }
  });
});
