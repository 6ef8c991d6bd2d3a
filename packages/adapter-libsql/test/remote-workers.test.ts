/**
 * Many workers on one libSQL server: 4 processes × 300 workspace steps on one
 * remote run (every acknowledged step present, sequences gap-free), and 100
 * runs on one server, one namespace each (docs/remote.md says why).
 */
import { spawn } from "node:child_process";
import { createInterface } from "node:readline";
import { fileURLToPath } from "node:url";
import { libsqlDriver } from "@runledger/adapter-libsql";
import { resolveLocalhostSubdomains, startSqld } from "@runledger/conformance/sqld";
import { RunStore } from "@runledger/core";
import { afterAll, describe, expect, it } from "vitest";

const WORKERS = 4;
/**
 * Steps per worker, over ws and over http alike: enough contention for
 * sqld's writer queue to be exercised at every turn (a connection per
 * transaction once hung it: kept-transaction.ts).
 */
const STEPS = { ws: 300, http: 300 } as const;
const RUNS = 100;
const workerScript = fileURLToPath(new URL("./support/remote-worker.mjs", import.meta.url));

interface Acknowledged {
  readonly worker: number;
  readonly step: number;
  readonly sequence: number;
  /** How many times the step's callback ran (twice when an optimistic step was refused). */
  readonly calls: number;
}

type Mode = "ordinary" | "optimistic";

/** Runs one worker process to its end; resolves with what it acknowledged. */
function runWorker(
  url: string,
  worker: number,
  steps: number,
  mode: Mode,
): Promise<Acknowledged[]> {
  return new Promise((resolve, reject) => {
    const args = [workerScript, url, String(worker), String(steps), mode];
    const child = spawn(process.execPath, args, { stdio: ["ignore", "pipe", "inherit"] });
    const acknowledged: Acknowledged[] = [];
    let failure: unknown;
    createInterface({ input: child.stdout }).on("line", (line) => {
      const message = JSON.parse(line);
      if ("failed" in message) failure = message;
      else acknowledged.push(message);
    });
    child.once("error", reject);
    child.once("exit", (code) => {
      if (code === 0) resolve(acknowledged);
      else reject(new Error(`worker ${worker} exited ${code}: ${JSON.stringify(failure)}`));
    });
  });
}

resolveLocalhostSubdomains();
const server = await startSqld({ namespaces: true });
afterAll(() => server.stop());

describe("remote libSQL: many workers, many runs", () => {
  for (const [protocol, mode] of [
    ["ws", "ordinary"],
    ["http", "ordinary"],
    ["ws", "optimistic"],
    ["http", "optimistic"],
  ] as const) {
    const steps = STEPS[protocol];
    const how = mode === "optimistic" ? "optimistic steps, those refused run again," : "steps";
    it(`over ${protocol}: ${WORKERS} processes × ${steps} ${how} on one run: every acknowledged step is there once, in a gap-free journal`, async () => {
      const url = server.namespaceUrl(`workers-${protocol}-${mode}`, protocol);
      const store = new RunStore({ driver: libsqlDriver({ adminUrl: server.adminUrl as string }) });
      try {
        // Created first, so the workers only open it.
        await (
          await store.open(url, { create: { workflowId: "workers", runId: "shared" } })
        ).release();
        const acknowledged = (
          await Promise.all(
            Array.from({ length: WORKERS }, (_, worker) => runWorker(url, worker, steps, mode)),
          )
        ).flat();
        expect(acknowledged).toHaveLength(WORKERS * steps);
        // Four writers on one run: an optimistic step's view is often stale, and the step is
        // then refused whole and run again; an ordinary step's callback always runs once.
        const reruns = acknowledged.filter((a) => a.calls === 2).length;
        expect(acknowledged.every((a) => a.calls === 1 || a.calls === 2)).toBe(true);
        if (mode === "optimistic") expect(reruns).toBeGreaterThan(0);
        else expect(reruns).toBe(0);

        const lease = await store.open(url);
        const journal = await lease.read((r) => r.journal.list({ limit: 100_000 }));
        expect(journal.map((e) => e.sequence)).toStrictEqual(
          Array.from({ length: WORKERS * steps }, (_, i) => i + 1),
        );
        const bySequence = new Map(journal.map((e) => [e.sequence, e.record]));
        for (const { worker, step, sequence } of acknowledged) {
          expect(bySequence.get(sequence)).toStrictEqual({ worker, step });
        }
        // Each worker's steps landed in its own order.
        for (let worker = 0; worker < WORKERS; worker++) {
          const mine = acknowledged.filter((a) => a.worker === worker).map((a) => a.sequence);
          expect(mine).toStrictEqual([...mine].sort((a, b) => a - b));
        }
        const files = await lease.read((r) => r.workspace.list("worker-3"));
        expect(files).toHaveLength(steps);
        await lease.release();
      } finally {
        await store.close();
      }
    }, 900_000);
  }

  it(`${RUNS} runs on one server, one namespace each, created on open: each holds its own events only`, async () => {
    const store = new RunStore({ driver: libsqlDriver({ adminUrl: server.adminUrl as string }) });
    const url = (i: number) => server.namespaceUrl(`run-${i}`, i % 2 === 0 ? "http" : "ws");
    try {
      const indexes = Array.from({ length: RUNS }, (_, i) => i);
      for (let start = 0; start < RUNS; start += 10) {
        await Promise.all(
          indexes.slice(start, start + 10).map(async (i) => {
            const lease = await store.open(url(i), {
              create: { workflowId: "many-runs", runId: `run-${i}` },
            });
            await lease.transact((tx) => tx.journal.append({ run: i }));
            await lease.release();
          }),
        );
      }
      for (const i of indexes) {
        const lease = await store.open(url(i));
        const journal = await lease.read((r) => r.journal.list());
        const run = await lease.read((r) => r.run.get());
        expect([i, journal.map((e) => e.record), run.runId]).toStrictEqual([
          i,
          [{ run: i }],
          `run-${i}`,
        ]);
        await lease.release();
      }
    } finally {
      await store.close();
    }
  }, 300_000);
});
