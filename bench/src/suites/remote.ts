/**
 * Remote libSQL (issue 14): the same run API on a local file, and on a libSQL
 * server (sqld, started here on 127.0.0.1) over http and over ws, side by
 * side: one journal append per transaction, and one workspace step (an apply
 * of one small file with its journal event) per transaction. Every run gets a
 * fresh database: a fresh file, or a fresh namespace on the server. Beside
 * the step, on the same server: Mastra's LibSQLStore `persistWorkflowSnapshot`
 * of a snapshot that gains the step (a bench peer, NOT RUN when absent).
 */

import { libsqlDriver } from "@runledger/adapter-libsql";
import { resolveLocalhostSubdomains, startSqld } from "@runledger/conformance/sqld";
import { type RunLease, RunStore } from "@runledger/core";
import {
  type Contender,
  formatRate,
  interleave,
  type Sample,
  type Suite,
  spread,
  time,
} from "../harness.js";
import { addMastraStep, newMastraSnapshot } from "../mastra.js";
import { type RawShape, rawSteps } from "../raw-remote.js";

type Workload = "append" | "step" | "optimistic step";
type Where = "file" | "http" | "ws";

const CREATE = { workflowId: "bench", runId: "remote" };

export const remoteSuite: Suite = {
  name: "remote",
  summary: "append and workspace step per transaction: local file vs sqld over http and ws",
  async run(context) {
    resolveLocalhostSubdomains();
    const server = await startSqld({ namespaces: true });
    try {
      let next = 0;
      const driver = libsqlDriver({ adminUrl: server.adminUrl as string });
      const locationFor = (where: Where, file: string) =>
        where === "file" ? file : server.namespaceUrl(`bench${++next}`, where);
      const count = (where: Where, workload: Workload) => {
        const base = context.quick ? 20 : where === "http" && workload !== "append" ? 100 : 300;
        return base;
      };
      const contender = (where: Where, workload: Workload): Contender => ({
        label: `${where} ${workload}`,
        async run(file) {
          const store = new RunStore({ driver });
          try {
            const lease = await store.open(locationFor(where, file), { create: CREATE });
            const n = count(where, workload);
            return await time(n, () => repeat(lease, workload, n));
          } finally {
            await store.close();
          }
        },
      });
      const mastra = (where: "ws" | "http"): Contender => ({
        label: `mastra ${where} step`,
        async run() {
          const n = count(where, "step");
          const persist = await mastraSnapshots(locationFor(where, ""), server);
          return await time(n, async () => {
            for (let i = 0; i < n; i++) await persist(i);
          });
        },
      });
      const raw = (where: "ws" | "http", shape: RawShape): Contender => ({
        label: `raw ${where} step, ${shape === "one" ? "1 request" : "2 requests"}`,
        async run() {
          const n = count(where, "step");
          const url = locationFor(where, "");
          await server.createNamespace(new URL(url).hostname.split(".")[0] as string);
          const steps = await rawSteps(url, shape);
          try {
            return await time(n, async () => {
              for (let i = 0; i < n; i++) await steps.step(i);
            });
          } finally {
            steps.close();
          }
        },
      });
      const rows: string[][] = [];
      const samples: Record<string, Sample[]> = {};
      for (const workload of ["append", "step"] as const) {
        const contenders = (["file", "ws", "http"] as const).map((where) =>
          contender(where, workload),
        );
        if (workload === "step") {
          contenders.push(contender("ws", "optimistic step"), contender("http", "optimistic step"));
          contenders.push(mastra("ws"), mastra("http"));
          for (const where of ["ws", "http"] as const) {
            contenders.push(raw(where, "one"), raw(where, "two"));
          }
        }
        const measured = await interleave(context, contenders, {
          runs: context.quick ? 1 : Math.min(context.runs, 3),
        });
        samples[workload] = measured;
        const file = measured[0] as Sample;
        for (const sample of measured) {
          rows.push([
            sample.label,
            formatRate(sample.median),
            (1000 / sample.median).toFixed(2),
            `${(sample.median / file.median).toFixed(3)}×`,
            `±${(spread(sample) * 100).toFixed(0)}%`,
          ]);
        }
      }
      return {
        notes: [
          "adapter-libsql (libsqlDriver) for all three; local file: WAL, synchronous=NORMAL; server: sqld 0.24.32 on 127.0.0.1 (its own durability settings), one namespace per run",
          "append: lease.transact(tx => tx.journal.append(record)); step: lease.transact(tx => tx.workspace.apply({ put: one ~40-byte file }, { event }))",
          "a runledger step is 2 requests (BEGIN with its savepoint and event, whose answer core reads; then the new tree nodes and COMMIT); an append 2; over http each request is an HTTP request, ws keeps one connection",
          "optimistic step: the same with lease.transact(fn, { optimistic: true }): BEGIN, the event, its nodes and COMMIT in one request (one writer, so no step is refused and run again)",
          "raw: @libsql/client itself, a ~200 B node row and a journal-sized event row in one write transaction: '1 request' = client.batch([...], 'write'); '2 requests' = the event in a transaction's first request, then the node with COMMIT",
        ],
        tables: [
          {
            title: "per transaction, local file vs sqld (median of the runs)",
            headers: ["case", "ops/s", "ms/op", "vs file", "spread"],
            rows,
          },
        ],
        data: samples,
      };
    } finally {
      await server.stop();
    }
  },
};

/**
 * Mastra's LibSQLStore on a fresh namespace of the server: one
 * `persistWorkflowSnapshot` a step, of a snapshot whose context gains the
 * step's result (what its workflow loop writes after each step).
 */
async function mastraSnapshots(
  url: string,
  server: { createNamespace(name: string): Promise<void> },
): Promise<(step: number) => Promise<void>> {
  await server.createNamespace(new URL(url).hostname.split(".")[0] as string);
  const { LibSQLStore } = await import("@mastra/libsql");
  // Only the workflows domain's tables: the whole store's init creates every domain's
  // tables at once, which a server answers SQLITE_SCHEMA to.
  const store = new LibSQLStore({ id: "bench", url, disableInit: true });
  const workflows = await store.getStore("workflows");
  if (workflows === undefined) throw new Error("LibSQLStore has no workflows domain");
  await (workflows as unknown as { init(): Promise<void> }).init();
  const snapshot = newMastraSnapshot("remote", {});
  return async (step) => {
    addMastraStep(snapshot, step, { step, ok: true });
    await workflows.persistWorkflowSnapshot({
      workflowName: "bench",
      runId: "remote",
      snapshot: snapshot as never,
    });
  };
}

async function repeat(lease: RunLease, workload: Workload, n: number): Promise<void> {
  for (let i = 0; i < n; i++) {
    if (workload === "append") {
      await lease.transact((tx) => tx.journal.append({ step: i, note: "appended" }));
    } else {
      await lease.transact(
        (tx) =>
          tx.workspace.apply(
            { put: { [`steps/${i}.json`]: `{"step":${i},"ok":true}` } },
            { event: { step: i } },
          ),
        { optimistic: workload === "optimistic step" },
      );
    }
  }
}
