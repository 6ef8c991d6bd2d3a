/**
 * Run as its own process by the commit-log suite, so that its RSS is the
 * staging's alone: stages `count` small ops, one stage() call each (as a
 * long run stages them), samples RSS every 5,000 calls, commits, and prints
 * one JSON line of figures.
 *
 * Usage: node --expose-gc commit-log-staging.js <file> <count>
 */
import { nodeDriver } from "@runledger/adapter-node";
import { CommitLogStore, put, typedChange } from "@runledger/core/commit-log";

export interface StagingFigures {
  readonly count: number;
  /** RSS after the log is open, before the first stage(). */
  readonly rssBefore: number;
  readonly rssPeakStaging: number;
  readonly rssPeakCommit: number;
  /** Heap in use after a full collection at the end of staging. */
  readonly heapAfterStaging: number;
  readonly stageMs: number;
  readonly commitMs: number;
  readonly commits: number;
}

async function main(): Promise<void> {
  const [file, countText] = process.argv.slice(2);
  const count = Number(countText);
  const store = new CommitLogStore({ driver: nodeDriver() });
  try {
    const log = await store.open(file as string, { create: true });
    const unit = await log.begin();
    (globalThis as { gc?: () => void }).gc?.();
    const rssBefore = process.memoryUsage().rss;
    let peak = rssBefore;
    const stageStart = performance.now();
    for (let i = 0; i < count; i++) {
      await unit.stage(
        typedChange("run.update", { workflowId: "bench", runId: "long" }, [
          put(`steps/${i}`, `{"step":${i}}`),
        ]),
      );
      if (i % 5_000 === 0) peak = Math.max(peak, process.memoryUsage().rss);
    }
    const stageMs = performance.now() - stageStart;
    const rssPeakStaging = Math.max(peak, process.memoryUsage().rss);
    (globalThis as { gc?: () => void }).gc?.();
    const heapAfterStaging = process.memoryUsage().heapUsed;
    let commitPeak = rssPeakStaging;
    const sampler = setInterval(() => {
      commitPeak = Math.max(commitPeak, process.memoryUsage().rss);
    }, 50);
    const commitStart = performance.now();
    const result = await unit.commit();
    const commitMs = performance.now() - commitStart;
    clearInterval(sampler);
    const landed = result.committed.reduce(
      (n, p) => n + p.commits.reduce((m, c) => m + c.opCount, 0),
      0,
    );
    if (landed !== count) throw new Error(`${landed} of ${count} ops landed`);
    await log.release();
    const figures: StagingFigures = {
      count,
      rssBefore,
      rssPeakStaging,
      rssPeakCommit: Math.max(commitPeak, process.memoryUsage().rss),
      heapAfterStaging,
      stageMs,
      commitMs,
      commits: result.committed.reduce((n, p) => n + p.commits.length, 0),
    };
    process.stdout.write(`${JSON.stringify(figures)}\n`);
  } finally {
    await store.close();
  }
}

await main();
