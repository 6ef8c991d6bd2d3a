/**
 * LangGraph's own checkpointer validation suite (specTest, and the opt-in
 * delta-channel tests) against RunledgerSaver on each adapter. Its CLI is
 * broken in 1.1.1, so its library entry runs inside this vitest run.
 */

import { join } from "node:path";
import { deltaChannelHistoryTests, specTest } from "@langchain/langgraph-checkpoint-validation";
import { RunStore } from "@runledger/core";
import { describe } from "vitest";
import { RunledgerSaver } from "../src/index.js";
import { BACKENDS, tempDirectory } from "./support/backends.js";
import { expectEveryFileVerifies } from "./support/verify.js";

for (const backend of BACKENDS) {
  const stores = new Map<RunledgerSaver, { store: RunStore; path: string; remove(): void }>();
  const initializer = {
    checkpointerName: `RunledgerSaver on ${backend.name}`,
    async createCheckpointer() {
      const directory = tempDirectory();
      // The catalog form: the threads live beside the catalog, which lists them.
      const catalog = join(directory.path, "threads.catalog");
      const store = new RunStore({ driver: backend.driver(), catalog });
      const saver = new RunledgerSaver({ store, catalog });
      stores.set(saver, { store, path: directory.path, remove: directory.remove });
      return saver;
    },
    async destroyCheckpointer(saver: RunledgerSaver) {
      const held = stores.get(saver);
      await saver.close();
      await held?.store.close();
      // What the suite wrote passes runledger's deep check, file by file.
      if (held !== undefined) await expectEveryFileVerifies(backend.driver(), held.path);
      held?.remove();
      stores.delete(saver);
    },
  };
  specTest(initializer);
  describe(`${initializer.checkpointerName} delta channels`, () => {
    deltaChannelHistoryTests(initializer);
  });
}
