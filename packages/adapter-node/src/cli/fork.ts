/**
 * `runledger fork`: a new run file that starts from the workspace a journal
 * event recorded, so an operator can retry from a known state without
 * touching the original run.
 */
import { rm, stat } from "node:fs/promises";
import { RunledgerError, RunStore } from "@runledger/core";
import { nodeDriver } from "../driver.js";
import { EXIT_OK, type Output, report, short } from "./output.js";
import { readRun } from "./store.js";

const exists = (path: string) =>
  stat(path).then(
    () => true,
    () => false,
  );

/**
 * A new run at `target` whose workspace starts at the root journal event
 * `sequence` of `source` recorded; same workflow, its own run id.
 */
export async function fork(
  source: string,
  sequence: number,
  target: string,
  options: { runId?: string },
  output: Output,
): Promise<number> {
  // Checked before the target is touched, so a wrong sequence creates nothing.
  const origin = await readRun(source, (lease) =>
    lease.read(async (r) => {
      const event = (await r.journal.list({ after: sequence - 1, limit: 1 }))[0];
      if (event === undefined || event.sequence !== sequence) {
        throw new RunledgerError(
          "invalid_argument",
          `${source} has no journal event ${sequence}: \`runledger log ${source}\` lists its events`,
        );
      }
      return { run: await r.run.get(), rootId: event.rootId };
    }),
  );
  const runId = options.runId ?? crypto.randomUUID();
  const created = !(await exists(target));
  const store = new RunStore({ driver: nodeDriver() });
  let result: { rootId: string; sequence: number };
  try {
    const forked = await store.fork(source, target, {
      create: { workflowId: origin.run.workflowId, runId },
      at: { sequence },
    });
    await forked.lease.release();
    result = { rootId: forked.rootId, sequence: forked.sequence };
  } catch (error) {
    await store.close();
    // A target this command created and could not fill is removed again.
    if (created) {
      await Promise.all(
        ["", "-wal", "-shm", "-journal"].map((suffix) => rm(`${target}${suffix}`, { force: true })),
      );
    }
    throw error;
  }
  await store.close();
  const value = {
    source,
    target,
    workflowId: origin.run.workflowId,
    runId,
    from: { sequence, rootId: origin.rootId },
    rootId: result.rootId,
    sequence: result.sequence,
  };
  await report(output, value, () => [
    `forked ${source} at event ${sequence} (root ${short(origin.rootId)}) into ${target}`,
    `  workflow      ${origin.run.workflowId}`,
    `  run           ${runId}`,
    `  current root  ${result.rootId}`,
    `  first event   ${result.sequence} (kind "fork")`,
  ]);
  return EXIT_OK;
}
