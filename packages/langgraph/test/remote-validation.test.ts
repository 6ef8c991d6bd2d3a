/**
 * LangGraph's own checkpointer validation suite (specTest and the
 * delta-channel tests) against RunledgerSaver on a libSQL server: sqld,
 * started here, over WebSocket and over HTTP. Each thread is a database of
 * its own (a namespace, named by `threadNamespace`), created by the driver's
 * admin API; the catalog is one more database there, and lists the threads
 * across them. Every database the suite wrote is verified, then removed.
 */
import { deltaChannelHistoryTests, specTest } from "@langchain/langgraph-checkpoint-validation";
import { libsqlDriver } from "@runledger/adapter-libsql";
import { resolveLocalhostSubdomains, startSqld } from "@runledger/conformance/sqld";
import { RunStore } from "@runledger/core";
import { afterAll, describe, expect } from "vitest";
import { RunledgerSaver, threadNamespace } from "../src/index.js";
import { expectRunVerifies } from "./support/verify.js";

resolveLocalhostSubdomains();
const server = await startSqld({ namespaces: true });
afterAll(() => server.stop());
const driver = () => libsqlDriver({ adminUrl: server.adminUrl as string });

let next = 0;
/** The thread databases verified after the suites, by protocol (37 each with the pinned suite). */
const verified = { ws: 0, http: 0 };
afterAll(() => {
  expect(verified.ws).toBeGreaterThan(30);
  expect(verified.http).toBeGreaterThan(30);
});

for (const protocol of ["ws", "http"] as const) {
  const stores = new Map<RunledgerSaver, RunStore>();
  const initializer = {
    checkpointerName: `RunledgerSaver on adapter-libsql, sqld over ${protocol}`,
    async createCheckpointer() {
      // Each checkpointer's databases carry a prefix of their own: the suite reuses thread ids.
      const prefix = `c${++next}`;
      const catalog = server.namespaceUrl(`${prefix}-catalog`, protocol);
      const store = new RunStore({ driver: driver(), catalog });
      const saver = new RunledgerSaver({
        store,
        catalog,
        locate: (threadId) =>
          server.namespaceUrl(`${prefix}-${threadNamespace(threadId)}`, protocol),
      });
      stores.set(saver, store);
      return saver;
    },
    async destroyCheckpointer(saver: RunledgerSaver) {
      const store = stores.get(saver);
      stores.delete(saver);
      await saver.close();
      if (store === undefined) return;
      try {
        // What the suite wrote passes runledger's deep check, database by database,
        // and is removed from the server (sqld keeps a bounded number of databases open).
        const { runs } = await store.list({ workflowId: saver.workflowId, limit: 10_000 });
        for (const { location } of runs) {
          await expectRunVerifies(store, location);
          await store.remove(location);
          verified[protocol]++;
        }
      } finally {
        await store.close();
      }
    },
  };

  specTest(initializer);
  describe(`${initializer.checkpointerName} delta channels`, () => {
    deltaChannelHistoryTests(initializer);
  });
}
