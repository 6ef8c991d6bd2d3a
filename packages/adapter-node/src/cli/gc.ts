/**
 * `runledger gc`: pruning old journal history and collecting what nothing
 * retains, for an operator whose run file has grown.
 */
import { EXIT_OK, type Output, report } from "./output.js";
import { progress } from "./progress.js";
import { withRun } from "./store.js";

/**
 * Drops journal history before a sequence (when asked), then collects every
 * node, file and piece nothing retains, in one transaction.
 */
export async function gc(
  file: string,
  options: { pruneBefore?: number },
  output: Output,
): Promise<number> {
  const { pruneBefore } = options;
  const phases = pruneBefore === undefined ? 1 : 2;
  const bar = progress("gc");
  let result: Awaited<ReturnType<typeof run>>;
  try {
    result = await run(file, pruneBefore, (phase, done) => bar.update(phase, done, phases));
  } finally {
    bar.stop();
  }
  const { pruned, collected, remaining } = result;
  const value = { file, pruneBefore: pruneBefore ?? null, pruned, collected, remaining };
  await report(output, value, () => [
    ...(pruneBefore === undefined
      ? []
      : [`pruned     ${pruned} journal events before ${pruneBefore}`]),
    `collected  ${collected.nodes} nodes, ${collected.files} files, ${collected.chunks} pieces`,
    `remaining  ${remaining.events} events, ${remaining.roots} roots, ${remaining.objects} objects, ${remaining.chunks} pieces`,
  ]);
  return EXIT_OK;
}

function run(
  file: string,
  pruneBefore: number | undefined,
  onProgress: (phase: string, done: number) => void,
) {
  return withRun(file, async (lease) => {
    const done = await lease.transact(async (tx) => {
      let pruned = 0;
      if (pruneBefore !== undefined) {
        onProgress("prune", 0);
        pruned = await tx.workspace.prune({ before: pruneBefore });
      }
      onProgress("collect", pruneBefore === undefined ? 0 : 1);
      const collected = await tx.workspace.collectGarbage();
      onProgress("collect", pruneBefore === undefined ? 1 : 2);
      return { pruned, collected };
    });
    return { ...done, remaining: await lease.read((r) => r.counts()) };
  });
}
