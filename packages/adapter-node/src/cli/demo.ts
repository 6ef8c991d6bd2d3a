/**
 * `runledger demo`: a small, deterministic workflow written through the
 * public run API, so a newcomer sees a real run file (and the tests a golden
 * one) from a single command.
 */
import { mkdir, mkdtemp, stat } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import {
  type JournalEvent,
  type RunInfo,
  type RunLease,
  RunledgerError,
  RunStore,
  type RunStoreOptions,
  type VerifyReport,
} from "@runledger/core";
import { nodeDriver } from "../driver.js";
import { eventLine } from "./log.js";
import { EXIT_FAILED, EXIT_OK, type Output, report } from "./output.js";
import { progress } from "./progress.js";
import { describeStop } from "./store.js";

/** The run file a demo writes inside its directory. */
export const DEMO_FILE = "demo.db";
const WORKFLOW_ID = "demo-pipeline";
const DOCUMENTS = 12;
const TAIL = 5;
/** RUNLEDGER_DEMO_CLOCK=fixed: every timestamp is this instant (2026-01-01T00:00:00.000Z). */
const FIXED_CLOCK = Date.UTC(2026, 0, 1);

interface Step {
  readonly name: string;
  readonly document?: string;
  readonly put?: Record<string, string>;
  readonly delete?: string[];
}

const WORDS = ["ledger", "run", "step", "root", "event", "file", "tree", "blob", "chunk", "sqlite"];

/** A small deterministic text per document, so every demo stores the same content. */
function documentText(n: number): string {
  const lines = [`# Document ${n}`];
  let seed = n * 7919;
  for (let line = 0; line < 4 + (n % 5); line++) {
    const words: string[] = [];
    for (let w = 0; w < 8; w++) {
      seed = (seed * 1103515245 + 12345) % 2147483648;
      words.push(WORDS[seed % WORDS.length]!);
    }
    lines.push(words.join(" "));
  }
  return `${lines.join("\n")}\n`;
}

/**
 * The sample workflow: plan, then fetch → tokenize → analyze for each
 * document (the tokens are scratch files, deleted once analyzed), then a
 * report. One transaction and one journal event per step.
 */
export function demoSteps(): Step[] {
  const names = Array.from(
    { length: DOCUMENTS },
    (_, i) => `doc-${String(i + 1).padStart(2, "0")}`,
  );
  const steps: Step[] = [
    { name: "plan", put: { "plan.json": `${JSON.stringify({ documents: names }, null, 2)}\n` } },
  ];
  const rows: string[] = [];
  names.forEach((document, i) => {
    const text = documentText(i + 1);
    const tokens = text.split(/\s+/).filter((word) => word !== "" && word !== "#");
    const counts = new Map<string, number>();
    for (const word of tokens) counts.set(word, (counts.get(word) ?? 0) + 1);
    const top = [...counts].sort((a, b) => b[1] - a[1] || a[0].localeCompare(b[0]))[0]!;
    const analysis = { document, lines: text.split("\n").length - 1, words: tokens.length, top };
    rows.push(`| ${document} | ${analysis.lines} | ${analysis.words} | ${top[0]} |`);
    steps.push(
      { name: "fetch", document, put: { [`inputs/${document}.txt`]: text } },
      { name: "tokenize", document, put: { [`tmp/${document}.tokens`]: `${tokens.join("\n")}\n` } },
      {
        name: "analyze",
        document,
        put: { [`analysis/${document}.json`]: `${JSON.stringify(analysis)}\n` },
        delete: [`tmp/${document}.tokens`],
      },
    );
  });
  const table = ["| document | lines | words | top word |", "| --- | --- | --- | --- |", ...rows];
  steps.push({ name: "report", put: { "report.md": `# Demo report\n\n${table.join("\n")}\n` } });
  return steps;
}

/** Injected time and ids for reproducible output (tests, docs), from the environment. */
function context(): Pick<RunStoreOptions, "clock" | "newId"> & { runId: string } {
  const fixed = process.env.RUNLEDGER_DEMO_CLOCK === "fixed";
  const sequential = process.env.RUNLEDGER_DEMO_IDS === "sequential";
  let next = 0;
  return {
    ...(fixed ? { clock: () => FIXED_CLOCK } : {}),
    ...(sequential ? { newId: () => `demo-event-${String(++next).padStart(4, "0")}` } : {}),
    runId: sequential ? "demo-run-0001" : crypto.randomUUID(),
  };
}

async function demoDirectory(dir: string | undefined): Promise<string> {
  if (dir === undefined) return mkdtemp(join(tmpdir(), "runledger-demo-"));
  const path = resolve(dir);
  await mkdir(path, { recursive: true });
  return path;
}

export async function demo(dir: string | undefined, output: Output): Promise<number> {
  const directory = await demoDirectory(dir);
  const file = join(directory, DEMO_FILE);
  if (
    await stat(file).then(
      () => true,
      () => false,
    )
  ) {
    throw new RunledgerError(
      "invalid_argument",
      `${file} already exists (an earlier demo?); look at it with \`runledger inspect ${file}\`, ` +
        "or choose another directory",
    );
  }
  const { runId, ...injected } = context();
  const steps = demoSteps();
  const store = new RunStore({ driver: nodeDriver(), ...injected });
  const bar = progress("demo");
  try {
    const lease = await store.open(file, {
      create: {
        workflowId: WORKFLOW_ID,
        runId,
        definition: {
          documents: DOCUMENTS,
          steps: ["plan", "fetch", "tokenize", "analyze", "report"],
        },
      },
    });
    try {
      const last = await runSteps(lease, steps, bar);
      const verify = await lease.verify({
        progress: (phase, done, total) => bar.update(phase, done, total),
      });
      bar.stop();
      const summary = await summarize(lease, last);
      const value = {
        dir: directory,
        file,
        driver: "better-sqlite3",
        run: summary.run,
        steps: steps.length,
        events: last,
        currentRoot: summary.currentRoot,
        files: summary.files,
        verify,
        journalTail: summary.journalTail,
      };
      await report(output, value, () => summaryLines(file, steps.length, last, summary, verify));
      return verify.ok ? EXIT_OK : EXIT_FAILED;
    } finally {
      await lease.release();
    }
  } finally {
    bar.stop();
    await store.close();
  }
}

/** Each step as one transaction (its files and its event), then the run completed: the last event's sequence. */
async function runSteps(
  lease: RunLease,
  steps: readonly Step[],
  bar: ReturnType<typeof progress>,
): Promise<number> {
  for (const [i, step] of steps.entries()) {
    bar.update("steps", i, steps.length);
    const put = step.put ?? {};
    const remove = step.delete ?? [];
    await lease.transact((tx) =>
      tx.workspace.apply(
        { put, delete: remove },
        {
          event: {
            kind: "step",
            step: i + 1,
            name: step.name,
            ...(step.document ? { document: step.document } : {}),
            put: Object.keys(put),
            delete: remove,
          },
        },
      ),
    );
  }
  bar.update("steps", steps.length, steps.length);
  return lease.transact(async (tx) => {
    const done = await tx.journal.append({ kind: "run.completed", steps: steps.length });
    await tx.run.stop({ status: "completed", reason: { event: done.sequence } });
    return done.sequence;
  });
}

/** What the summary shows of the finished run, read in one snapshot. */
interface Summary {
  readonly run: RunInfo;
  readonly currentRoot: string;
  readonly files: number;
  readonly journalTail: JournalEvent[];
}

async function summarize(lease: RunLease, last: number): Promise<Summary> {
  return lease.read(async (r) => {
    let files = 0;
    for await (const _ of r.workspace.walk()) files++;
    return {
      run: await r.run.get(),
      currentRoot: await r.workspace.currentRoot(),
      files,
      journalTail: await r.journal.list({ after: Math.max(0, last - TAIL) }),
    };
  });
}

/** The plain-text summary. */
function summaryLines(
  file: string,
  steps: number,
  last: number,
  summary: Summary,
  verify: VerifyReport,
): string[] {
  const { counts } = verify;
  const tail = summary.journalTail;
  return [
    `runledger demo: ${steps} steps of workflow ${WORKFLOW_ID} on better-sqlite3`,
    "",
    `  run file      ${file}`,
    `  run           ${summary.run.runId}`,
    `  status        ${summary.run.status}, ${describeStop(summary.run.stopReason)}`,
    `  steps         ${steps} (${last} journal events)`,
    `  current root  ${summary.currentRoot}`,
    `  files         ${summary.files}`,
    `  verify        ${verify.ok ? "ok" : `${verify.problems.length} problem(s)`} (${counts.events} events, ${counts.objects} objects, ${counts.chunks} pieces, ${counts.roots} roots)`,
    "",
    `journal tail (last ${tail.length} of ${last} events)`,
    ...tail.map((event) => `  ${eventLine(event)}`),
    "",
    "look inside:",
    `  npx runledger inspect ${file}`,
    `  npx runledger ls ${file} analysis`,
    `  npx runledger cat ${file} report.md`,
    `  npx runledger serve ${file}    # in the browser`,
  ];
}
