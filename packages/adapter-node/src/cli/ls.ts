/**
 * `runledger ls`: one workspace directory at a root, like `ls -l`.
 */
import { columns, EXIT_OK, type Output, report } from "./output.js";
import { resolveRoot } from "./roots.js";
import { readRun } from "./store.js";

/** The entries of one workspace directory at a root (default: the current one). */
export async function ls(
  file: string,
  directory: string | undefined,
  options: { root?: string },
  output: Output,
): Promise<number> {
  const listing = await readRun(file, (lease) =>
    lease.read(async (r) => {
      const root =
        options.root === undefined
          ? await r.workspace.currentRoot()
          : await resolveRoot(r, options.root);
      return { root, entries: await r.workspace.list(directory, { root }) };
    }),
  );
  const value = { file, directory: directory ?? "", ...listing };
  await report(output, value, () => {
    const sizes = listing.entries.map((entry) =>
      entry.size === undefined ? "-" : String(entry.size),
    );
    const width = Math.max(0, ...sizes.map((size) => size.length));
    return columns(
      listing.entries.map((entry, i) => [
        sizes[i]!.padStart(width),
        entry.digest === undefined ? "-" : entry.digest.slice(0, 12),
        entry.kind === "directory" ? `${entry.name}/` : entry.name,
      ]),
    );
  });
  return EXIT_OK;
}
