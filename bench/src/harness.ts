/**
 * The shared harness: suites, timing, medians, tables, temp files and the
 * JSON results in bench/out/. Suites measure; this file runs and reports.
 */
import { execFile } from "node:child_process";
import { mkdir, mkdtemp, rm, stat, writeFile } from "node:fs/promises";
import { availableParallelism, cpus, loadavg, tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";

export interface Suite {
  readonly name: string;
  readonly summary: string;
  run(context: SuiteContext): Promise<SuiteReport>;
}

export interface SuiteContext {
  /** BENCH_QUICK=1: a smoke check with fewer operations and runs. */
  readonly quick: boolean;
  /** Timed runs per contender; each table shows the median. */
  readonly runs: number;
  /** A path for a database that does not exist yet, inside this suite's temp dir. */
  freshFile(): string;
}

export interface SuiteReport {
  /** Lines printed above the tables (settings, what ran). */
  readonly notes: readonly string[];
  readonly tables: readonly Table[];
  /** Everything measured, written to bench/out/<suite>.json. */
  readonly data: unknown;
}

export interface Table {
  readonly title: string;
  readonly headers: readonly string[];
  readonly rows: readonly (readonly string[])[];
}

/** One timed section: how many operations ran and how long they took. */
export interface Timing {
  readonly ops: number;
  readonly ns: bigint;
}

/** One side of a comparison: runs its workload on a fresh file and times it. */
export interface Contender {
  readonly label: string;
  run(file: string): Promise<Timing>;
}

export interface Sample {
  readonly label: string;
  /** Operations per second, one per run, in run order. */
  readonly rates: readonly number[];
  readonly median: number;
}

const OUT_DIR = fileURLToPath(new URL("../out/", import.meta.url));

export async function time(ops: number, body: () => Promise<void>): Promise<Timing> {
  const start = process.hrtime.bigint();
  await body();
  return { ops, ns: process.hrtime.bigint() - start };
}

export function rate(timing: Timing): number {
  return (timing.ops * 1e9) / Number(timing.ns);
}

export function median(values: readonly number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  const middle = sorted.length >> 1;
  return sorted.length % 2 === 1
    ? (sorted[middle] as number)
    : ((sorted[middle - 1] as number) + (sorted[middle] as number)) / 2;
}

/** Half the range of the runs, relative to their median: a rough noise figure. */
export function spread(sample: Sample): number {
  return (Math.max(...sample.rates) - Math.min(...sample.rates)) / 2 / sample.median;
}

/**
 * How `a` compares with `b`, run by run: the median of the ratios of their
 * rates in the same round. `interleave` runs the contenders of one round
 * back to back, so each ratio compares runs made while the machine ran at
 * the same speed; on a machine whose speed drifts, this is steadier than the
 * ratio of the two medians, which may come from different rounds.
 */
export function pairedRatio(a: Sample, b: Sample): number {
  return median(a.rates.map((rate, round) => rate / (b.rates[round] as number)));
}

/**
 * Runs every contender once untimed (JIT, native module and page cache warm
 * up; `warmupRuns: 0` skips that, e.g. when every run is a fresh process),
 * then `runs` times interleaved (A B, B A, A B, …) so that drift in the
 * machine's load falls on all of them alike. Each run gets a fresh file,
 * deleted afterwards, and (unless `collect: false`) a garbage collection first.
 */
export async function interleave(
  context: SuiteContext,
  contenders: readonly Contender[],
  options: {
    readonly runs?: number;
    /**
     * Collect garbage before each run (default). Off for work measured in
     * its steady state: a forced full collection also throws away what V8's
     * compiler learned, and a path of much JavaScript then runs cold again
     * in every round while a path of little barely notices.
     */
    readonly collect?: boolean;
    /** Untimed runs of each contender before the timed ones (default 1). */
    readonly warmupRuns?: number;
  } = {},
): Promise<Sample[]> {
  const once = async (contender: Contender): Promise<number> => {
    const file = context.freshFile();
    if (options.collect ?? true) collectGarbage();
    try {
      return rate(await contender.run(file));
    } finally {
      await removeDatabase(file);
    }
  };
  for (let round = 0; round < (options.warmupRuns ?? 1); round++) {
    for (const contender of contenders) await once(contender);
  }
  const rates = contenders.map(() => [] as number[]);
  const runs = options.runs ?? context.runs;
  for (let run = 0; run < runs; run++) {
    const order = contenders.map((_, index) => index);
    if (run % 2 === 1) order.reverse();
    for (const index of order) {
      rates[index]?.push(await once(contenders[index] as Contender));
    }
  }
  return contenders.map((contender, index) => {
    const values = rates[index] as number[];
    return { label: contender.label, rates: values, median: median(values) };
  });
}

export async function runSuite(suite: Suite, quick: boolean): Promise<void> {
  const dir = await mkdtemp(join(tmpdir(), `runledger-bench-${suite.name}-`));
  let files = 0;
  const context: SuiteContext = {
    quick,
    runs: quick ? 3 : 7,
    freshFile: () => join(dir, `run-${++files}.db`),
  };
  try {
    const environment = describeEnvironment();
    console.log(`\n## ${suite.name}: ${suite.summary}`);
    console.log(
      `${environment.node} · ${environment.platform} · ${environment.cpus} × ${environment.cpu} · ` +
        `load ${environment.loadBefore} · median of ${context.runs} runs${quick ? " · QUICK" : ""}`,
    );
    const report = await suite.run(context);
    for (const note of report.notes) console.log(note);
    for (const table of report.tables) console.log(`\n${formatTable(table)}`);
    await mkdir(OUT_DIR, { recursive: true });
    const out = join(OUT_DIR, `${suite.name}.json`);
    const result = {
      suite: suite.name,
      finishedAt: new Date().toISOString(),
      quick,
      runs: context.runs,
      environment: { ...environment, loadAfter: loadAverage() },
      notes: report.notes,
      data: report.data,
    };
    await writeFile(out, `${JSON.stringify(result, jsonValue, 2)}\n`);
    console.log(`\nresults: ${out}`);
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

export function formatTable(table: Table): string {
  const widths = table.headers.map((header, column) =>
    Math.max(header.length, ...table.rows.map((row) => (row[column] ?? "").length)),
  );
  // The first column is a label (left-aligned); the rest are figures.
  const line = (cells: readonly string[]) =>
    cells
      .map((cell, column) =>
        column === 0 ? cell.padEnd(widths[column] ?? 0) : cell.padStart(widths[column] ?? 0),
      )
      .join(" | ");
  const rule = widths.map((width) => "-".repeat(width)).join("-|-");
  return [table.title, line(table.headers), rule, ...table.rows.map(line)].join("\n");
}

export function formatRate(value: number): string {
  return Math.round(value).toLocaleString("en-US");
}

export function mib(bytes: number): number {
  return bytes / (1024 * 1024);
}

/** Bytes as MiB with one decimal, for tables. */
export function formatMib(bytes: number): string {
  return mib(bytes).toFixed(1);
}

/** A database's size on disk: the file plus its WAL, if any (0 for a part that does not exist). */
export async function databaseSize(file: string): Promise<number> {
  const sizes = await Promise.all(
    ["", "-wal"].map((end) =>
      stat(file + end).then(
        (s) => s.size,
        () => 0,
      ),
    ),
  );
  return sizes.reduce((a, b) => a + b, 0);
}

/**
 * Peak RSS of this process: sampled every `intervalMs` and whenever `sample()`
 * is called (a tight synchronous loop starves the timer, so call it from there).
 */
export function trackPeakRss(intervalMs = 10): {
  sample(): number;
  readonly peak: number;
  stop(): number;
} {
  let peak = process.memoryUsage.rss();
  const sample = () => {
    const rss = process.memoryUsage.rss();
    if (rss > peak) peak = rss;
    return rss;
  };
  const timer = setInterval(sample, intervalMs);
  return {
    sample,
    get peak() {
      return peak;
    },
    stop() {
      clearInterval(timer);
      sample();
      return peak;
    },
  };
}

/**
 * Runs a compiled bench module as its own process (so its RSS is its own work
 * alone) and returns the JSON it prints on its last stdout line. The module
 * checks `isChildEntry(import.meta.url)` to know it was started this way.
 */
export function runChild<T>(moduleUrl: string, args: readonly string[]): Promise<T> {
  const script = fileURLToPath(moduleUrl);
  return new Promise((resolve, reject) => {
    execFile(
      process.execPath,
      ["--expose-gc", script, ...args],
      { maxBuffer: 16 << 20 },
      (error, stdout, stderr) => {
        if (error) {
          reject(new Error(`${script} ${args.join(" ")}: ${error.message}\n${stderr}`));
          return;
        }
        const last = stdout.trim().split("\n").pop() ?? "";
        try {
          resolve(JSON.parse(last) as T);
        } catch {
          reject(new Error(`${script} printed no JSON result:\n${stdout}\n${stderr}`));
        }
      },
    );
  });
}

/** True when this module is the script node was started with (see runChild). */
export function isChildEntry(moduleUrl: string): boolean {
  return process.argv[1] === fileURLToPath(moduleUrl);
}

/** Prints a child's result as the one JSON line runChild reads. */
export function reportToParent(result: unknown): void {
  process.stdout.write(`${JSON.stringify(result, jsonValue)}\n`);
}

export function collectGarbage(): void {
  // Present when node runs with --expose-gc (the bench script does).
  (globalThis as { gc?: () => void }).gc?.();
}

async function removeDatabase(file: string): Promise<void> {
  await Promise.all(["", "-wal", "-shm", "-journal"].map((end) => rm(file + end, { force: true })));
}

function describeEnvironment() {
  return {
    node: process.version,
    platform: `${process.platform} ${process.arch}`,
    cpus: availableParallelism(),
    cpu: cpus()[0]?.model.trim() ?? "unknown cpu",
    /** Other work on the machine skews every figure: the 1-minute load average says how much. */
    loadBefore: loadAverage(),
  };
}

function loadAverage(): string {
  return (loadavg()[0] ?? 0).toFixed(2);
}

function jsonValue(_key: string, value: unknown): unknown {
  return typeof value === "bigint" ? value.toString() : value;
}
