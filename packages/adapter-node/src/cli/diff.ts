/**
 * `runledger diff`: the files that differ between two points of a run's
 * history (journal sequences or roots), one line a file: `A` added, `D`
 * removed, `M` modified, then the path and the sizes.
 */
import type { WorkspaceChange } from "@runledger/core";
import { columns, EXIT_OK, type Output, report } from "./output.js";
import { resolvePoint } from "./roots.js";
import { readRun } from "./store.js";

const LETTER = { added: "A", removed: "D", modified: "M" } as const;

export async function diff(
  file: string,
  from: string,
  to: string,
  output: Output,
): Promise<number> {
  const result = await readRun(file, (lease) =>
    lease.read(async (r) => {
      const a = await resolvePoint(r, from);
      const b = await resolvePoint(r, to);
      const changes: WorkspaceChange[] = [];
      for await (const change of r.workspace.diff(a, b)) changes.push(change);
      return { from: a, to: b, changes };
    }),
  );
  await report(output, { file, ...result }, () =>
    columns(
      result.changes.map((change) => [
        LETTER[change.change],
        change.path,
        [change.before?.size, change.after?.size].filter((size) => size !== undefined).join(" → "),
      ]),
    ),
  );
  return EXIT_OK;
}
