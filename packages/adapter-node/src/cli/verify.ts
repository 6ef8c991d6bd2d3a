/**
 * `runledger verify`: the deep check as a command, with an exit code a
 * script can act on.
 */
import { EXIT_FAILED, EXIT_OK, type Output, report, write } from "./output.js";
import { progress } from "./progress.js";
import { readRun } from "./store.js";

/** The deep check; exit 1 when it finds problems. */
export async function verify(file: string, output: Output): Promise<number> {
  const bar = progress("verify");
  let result: Awaited<ReturnType<typeof run>>;
  try {
    result = await run(file, bar.update);
  } finally {
    bar.stop();
  }
  const { ok, problems, counts } = result;
  const message = `${problems.length} problem(s) found in ${file}; restore it from a copy`;
  const failure = ok ? {} : { error: { code: "verify_failed", message } };
  await report(output, { file, ok, problems, counts, ...failure }, () => [
    `${ok ? "ok" : "FAILED"}: ${file}: ${counts.events} events, ${counts.objects} objects, ${counts.chunks} pieces, ${counts.roots} roots`,
    ...problems.map((problem) => `  ${problem}`),
  ]);
  if (ok) return EXIT_OK;
  if (!output.json) {
    await write(process.stderr, `runledger: verify_failed: ${message}\n`);
  }
  return EXIT_FAILED;
}

function run(file: string, onProgress: (phase: string, done: number, total: number) => void) {
  return readRun(file, (lease) => lease.verify({ progress: onProgress }));
}
