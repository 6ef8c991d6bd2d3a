/**
 * A list channel is stored as pages of consecutive elements (src/pages.ts):
 * their bounds, their bytes, and what a growing thread leaves in its roots.
 */
import { Annotation, END, START, StateGraph } from "@langchain/langgraph";
import { RunStore } from "@runledger/core";
import { afterAll, describe, expect, it } from "vitest";
import { RunledgerSaver } from "../src/index.js";
import { packPage, pagesOf, unpackPage } from "../src/pages.js";
import { BACKENDS, tempDirectory } from "./support/backends.js";
import { expectEveryFileVerifies } from "./support/verify.js";

const names = (length: number) => pagesOf(length).map((page) => page.name);

describe("a list's pages", () => {
  it("are every full block of 64 elements, then pages of 8, the last one partial", () => {
    expect(names(0)).toStrictEqual([]);
    expect(names(1)).toStrictEqual(["00000000-00000000"]);
    expect(names(8)).toStrictEqual(["00000000-00000007"]);
    expect(names(9)).toStrictEqual(["00000000-00000007", "00000008-00000008"]);
    expect(names(63).length).toBe(8);
    expect(names(64)).toStrictEqual(["00000000-00000063"]);
    expect(names(130)).toStrictEqual([
      "00000000-00000063",
      "00000064-00000127",
      "00000128-00000129",
    ]);
    expect(pagesOf(130).map((page) => page.count)).toStrictEqual([64, 64, 2]);
  });

  it("give back each element's type and bytes from a page's bytes", () => {
    const elements = [
      { type: "json", bytes: new TextEncoder().encode('{"content":"héllo"}') },
      { type: "bytes", bytes: new Uint8Array([0, 255, 7]) },
      { type: "typé", bytes: new Uint8Array() },
    ];
    const unpacked = unpackPage(packPage(elements), 3, "p");
    expect(unpacked.map((e) => ({ type: e.type, bytes: [...e.bytes] }))).toStrictEqual(
      elements.map((e) => ({ type: e.type, bytes: [...e.bytes] })),
    );
  });

  it("refuse bytes that are not a page of its elements as corrupt, naming the page", () => {
    const page = packPage([{ type: "json", bytes: new TextEncoder().encode("[1]") }]);
    for (const [bytes, count] of [
      [page.subarray(0, page.length - 1), 1],
      [page, 2],
      [new Uint8Array([0, 0, 0, 1, 0xff, 0, 0, 0, 0]), 1],
    ] as const) {
      expect(() => unpackPage(bytes, count, "channels/messages/00000000-00000000")).toThrow(
        expect.objectContaining({
          code: "corrupt",
          message: expect.stringContaining("channels/messages/00000000-00000000"),
        }),
      );
    }
  });
});

const State = Annotation.Root({
  messages: Annotation<{ id: string; content: string }[]>({
    reducer: (a, b) => a.concat(b),
    default: () => [],
  }),
});

const growing = new StateGraph(State)
  .addNode("say", (state) => ({
    messages: [{ id: `m${state.messages.length}`, content: `message ${state.messages.length}` }],
  }))
  .addEdge(START, "say")
  .addEdge("say", END);

const STEPS = 70;

describe.each(BACKENDS)("a growing messages channel on $name", (backend) => {
  const directory = tempDirectory();
  afterAll(() => directory.remove());

  it("changes, from each checkpoint to the next, only the pages that hold the new message", async () => {
    const store = new RunStore({ driver: backend.driver() });
    const saver = new RunledgerSaver({ store, directory: directory.path });
    const app = growing.compile({ checkpointer: saver });
    const config = { configurable: { thread_id: "grow" } };
    for (let i = 0; i < STEPS; i++) await app.invoke({}, config);
    await saver.close();

    const lease = await store.open(saver.location("grow"), { readOnly: true });
    const seen = await lease.read(async (r) => {
      const checkpoints = await r.journal.list({ keyPrefix: "c::", limit: 1000 });
      const out: { length: number; added: string[]; removed: string[]; modified: string[] }[] = [];
      let previous: { sequence: number; length: number } | undefined;
      for (const event of checkpoints) {
        const entry = (event.record as { channels: { messages?: { list: number } } }).channels
          .messages;
        const length = entry?.list ?? 0;
        if (previous !== undefined && length === previous.length + 1) {
          const changes = {
            length,
            added: [] as string[],
            removed: [] as string[],
            modified: [] as string[],
          };
          for await (const change of r.workspace.diff(
            { sequence: previous.sequence },
            { sequence: event.sequence },
          )) {
            if (!change.path.startsWith("channels/messages/")) continue;
            changes[change.change].push(change.path.slice("channels/messages/".length));
          }
          out.push(changes);
        }
        previous = { sequence: event.sequence, length };
      }
      const newest = await r.workspace.list("channels/messages");
      return { out, newest: newest.map((entry) => entry.name) };
    });
    await lease.release();

    expect(seen.newest).toStrictEqual(names(STEPS));
    expect(seen.out.length).toBe(STEPS);
    for (const { length, added, removed, modified } of seen.out) {
      const before = new Set(names(length - 1));
      const after = new Set(names(length));
      expect({ length, added, removed, modified }).toStrictEqual({
        length,
        added: [...after].filter((name) => !before.has(name)),
        removed: [...before].filter((name) => !after.has(name)),
        modified: [],
      });
      expect(added.length).toBe(1);
    }

    // Read cold, by a saver that wrote nothing: the same messages, in order.
    const fresh = new RunledgerSaver({ store, directory: directory.path });
    const tuple = await fresh.getTuple(config);
    if (tuple === undefined) throw new Error("the thread has no checkpoint");
    const messages = tuple.checkpoint.channel_values.messages as { id: string }[];
    expect(messages.map((message) => message.id)).toStrictEqual(
      Array.from({ length: STEPS }, (_, i) => `m${i}`),
    );
    await fresh.close();
    await store.close();
    expect(await expectEveryFileVerifies(backend.driver(), directory.path)).toBe(1);
  });

  it("reads the parent's pages when a put's parent is not in memory, and keeps its elements", async () => {
    const store = new RunStore({ driver: backend.driver() });
    const writer = new RunledgerSaver({ store, directory: directory.path });
    const app = growing.compile({ checkpointer: writer });
    const config = { configurable: { thread_id: "cold-parent" } };
    for (let i = 0; i < 12; i++) await app.invoke({}, config);
    const parent = await writer.getTuple(config);
    await writer.close();

    // A saver that never read the parent puts a child with one message more.
    const other = new RunledgerSaver({ store, directory: directory.path });
    const values = parent!.checkpoint.channel_values as { messages: { id: string }[] };
    const child = {
      ...parent!.checkpoint,
      id: "1f0d0000-0000-6000-8000-00000000ffff",
      channel_values: { messages: [...values.messages, { id: "extra", content: "one more" }] },
      channel_versions: { ...parent!.checkpoint.channel_versions, messages: 99 },
    };
    await other.put(parent!.config, child, parent!.metadata!, { messages: 99 });
    await other.close();

    const reader = new RunledgerSaver({ store, directory: directory.path });
    const read = await reader.getTuple({
      configurable: { thread_id: "cold-parent", checkpoint_id: child.id },
    });
    if (read === undefined) throw new Error("the child checkpoint was not stored");
    const ids = (read.checkpoint.channel_values.messages as { id: string }[]).map((m) => m.id);
    expect(ids).toStrictEqual([...Array.from({ length: 12 }, (_, i) => `m${i}`), "extra"]);
    await reader.close();
    await store.close();
  });
});
