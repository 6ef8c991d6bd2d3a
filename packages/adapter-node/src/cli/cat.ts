/**
 * `runledger cat`: one workspace file's bytes, streamed to stdout as stored,
 * so a file of any size can be piped out of a run without unpacking the run.
 */
import { Buffer } from "node:buffer";
import { EXIT_OK, type Output, write } from "./output.js";
import { resolveRoot } from "./roots.js";
import { readRun } from "./store.js";

/**
 * A workspace file's bytes on stdout, one chunk at a time. With --json, one
 * object whose `content` is the bytes in base64, still written as it streams.
 */
export async function cat(
  file: string,
  path: string,
  options: { root?: string },
  output: Output,
): Promise<number> {
  await readRun(file, (lease) =>
    lease.read(async (r) => {
      const root =
        options.root === undefined
          ? await r.workspace.currentRoot()
          : await resolveRoot(r, options.root);
      // stat first: a missing path or a directory fails before any byte is written.
      const entry = await r.workspace.stat(path, { root });
      if (!output.json) {
        if (entry.kind === "directory") await r.workspace.read(path, { root }); // not_a_file
        for await (const chunk of r.workspace.stream(path, { root })) {
          await write(process.stdout, chunk);
        }
        return;
      }
      if (entry.kind === "directory") await r.workspace.read(path, { root });
      const head = { file, root, path: entry.path, size: entry.size, digest: entry.digest };
      await write(
        process.stdout,
        `${JSON.stringify(head).slice(0, -1)},"encoding":"base64","content":"`,
      );
      let carry: Uint8Array = new Uint8Array(0);
      for await (const chunk of r.workspace.stream(path, { root })) {
        const data = carry.length === 0 ? chunk : Buffer.concat([carry, chunk]);
        const whole = data.length - (data.length % 3);
        await write(
          process.stdout,
          Buffer.from(data.buffer, data.byteOffset, whole).toString("base64"),
        );
        carry = data.subarray(whole);
      }
      await write(process.stdout, `${Buffer.from(carry).toString("base64")}"}\n`);
    }),
  );
  return EXIT_OK;
}
