/**
 * Diff between two roots (issue 33): a one-file change in a tree of 10,000
 * and of 100,000 files (one directory), diffed by a store with a cold node
 * cache; how many statements read `workspace_object` (the nodes the diff
 * had to read) and how long it took, against walking both roots whole.
 */
import { nodeDriver } from "@runledger/adapter-node";
import { type RunSnapshot, RunStore } from "@runledger/core";
import { median, type Suite, type SuiteContext, type Table } from "../harness.js";
import { type Recording, recordingDriver } from "../replay.js";

const encoder = new TextEncoder();
const name = (i: number) => `files/f${String(i).padStart(6, "0")}`;

interface Built {
  readonly file: string;
  readonly before: string;
  readonly after: string;
}

async function build(context: SuiteContext, files: number): Promise<Built> {
  const file = context.freshFile();
  const store = new RunStore({ driver: nodeDriver() });
  try {
    const lease = await store.open(file, { create: { workflowId: "bench", runId: "diff" } });
    let before = "";
    for (let start = 0; start < files; start += 10_000) {
      const put: Record<string, Uint8Array> = {};
      for (let i = start; i < Math.min(files, start + 10_000); i++) {
        put[name(i)] = encoder.encode(`${i}`.padEnd(40, "."));
      }
      before = (await lease.transact((tx) => tx.workspace.apply({ put }))).rootId;
    }
    const changed = { [name(Math.floor(files / 2))]: encoder.encode("changed") };
    const after = (await lease.transact((tx) => tx.workspace.apply({ put: changed }))).rootId;
    await lease.release();
    return { file, before, after };
  } finally {
    await store.close();
  }
}

/**
 * One cold pass of `body` over the run in `file` (a new store, so a cold node
 * cache; the open is timed too): its node reads, milliseconds and answer.
 */
async function cold(
  file: string,
  body: (r: RunSnapshot) => Promise<number>,
): Promise<{ reads: number; ms: number; found: number }> {
  const recording: Recording = { connections: [], staged: [] };
  const store = new RunStore({ driver: recordingDriver(nodeDriver(), recording) });
  try {
    const started = performance.now();
    const lease = await store.open(file);
    const found = await lease.read(body);
    const ms = performance.now() - started;
    await lease.release();
    const reads = recording.connections
      .flat()
      .filter((call) => call.kind === "statement" && call.sql.includes("workspace_object")).length;
    return { reads, ms, found };
  } finally {
    await store.close();
  }
}

export const diffSuite: Suite = {
  name: "diff",
  summary: "a one-file change in a tree of 10,000 and 100,000 files: nodes read and time to diff",
  async run(context) {
    const sizes = context.quick ? [10_000] : [10_000, 100_000];
    const rows: string[][] = [];
    const data: unknown[] = [];
    for (const files of sizes) {
      const built = await build(context, files);
      const runs = context.quick ? 3 : 7;
      const diffs = [];
      const walks = [];
      for (let i = 0; i < runs; i++) {
        diffs.push(
          await cold(built.file, async (r) => {
            let changes = 0;
            for await (const _ of r.workspace.diff({ root: built.before }, { root: built.after })) {
              changes++;
            }
            return changes;
          }),
        );
        walks.push(
          await cold(built.file, async (r) => {
            let seen = 0;
            for (const root of [built.before, built.after]) {
              for await (const _ of r.workspace.walk("", { root })) seen++;
            }
            return seen;
          }),
        );
      }
      if (diffs.some((run) => run.found !== 1)) throw new Error("the diff did not find one change");
      const diffMs = median(diffs.map((run) => run.ms));
      const walkMs = median(walks.map((run) => run.ms));
      rows.push([
        files.toLocaleString("en-US"),
        String(diffs[0]!.reads),
        diffMs.toFixed(1),
        String(walks[0]!.reads),
        walkMs.toFixed(1),
      ]);
      data.push({ files, diffs, walks });
    }
    const table: Table = {
      title: `a one-file change, cold node cache, median of ${context.quick ? 3 : 7} (statements reading workspace_object; ms including the open)`,
      headers: ["files", "diff: node reads", "diff ms", "walk both roots: node reads", "walk ms"],
      rows,
    };
    return {
      notes: [
        "adapter-node; the tree: files/f000000 … in one directory, 40 B each (held in their entries), written 10,000 an apply; then one file changed",
        "each pass a new RunStore (cold node cache) through a recording driver; the diff is r.workspace.diff({ root: before }, { root: after })",
      ],
      tables: [table],
      data,
    };
  },
};
