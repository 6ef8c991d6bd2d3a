/**
 * What RunledgerSaver keeps of the values it is given: a copy, so that the
 * caller may change its own arrays once a call has settled.
 */
import { RunStore } from "@runledger/core";
import { afterEach, describe, expect, it } from "vitest";
import { RunledgerSaver } from "../src/index.js";
import { BACKENDS, tempDirectory } from "./support/backends.js";

const METADATA = { source: "input", step: -1, parents: {} } as const;

const cleanups: (() => Promise<void> | void)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

for (const backend of BACKENDS) {
  describe(`RunledgerSaver's values on ${backend.name}`, () => {
    it("keeps a copy of a channel value given as bytes, alone or in a list: changing the caller's Buffer after put changes nothing read", async () => {
      const directory = tempDirectory();
      const store = new RunStore({ driver: backend.driver() });
      const saver = new RunledgerSaver({ store, directory: directory.path });
      cleanups.push(
        directory.remove,
        () => store.close(),
        () => saver.close(),
      );
      // A Buffer's slice is a view of the same memory: a copy must be made another way.
      const blob = Buffer.from("the bytes as they were put");
      const element = Buffer.from("an element as it was put");
      const config = await saver.put(
        { configurable: { thread_id: "bytes" } },
        {
          v: 4,
          id: "1ef0000-0000-6000-8000-000000000001",
          ts: "2026-12-06T00:00:00.000Z",
          channel_values: { blob, list: ["text", element] },
          channel_versions: { blob: 1, list: 1 },
          versions_seen: {},
        },
        METADATA,
        { blob: 1, list: 1 },
      );
      blob.fill(0x21);
      element.fill(0x21);
      const values = (await saver.getTuple(config))?.checkpoint.channel_values;
      expect(Buffer.from(values?.blob as Uint8Array).toString()).toBe("the bytes as they were put");
      const list = values?.list as [string, Uint8Array];
      expect(list[0]).toBe("text");
      expect(Buffer.from(list[1]).toString()).toBe("an element as it was put");
    });
  });
}
