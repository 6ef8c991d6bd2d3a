/**
 * A second process that writes runs through copies of core built with other
 * workspace constants: what a file written by another build of runledger
 * looks like. Core reads no environment and has no switch for its
 * constants, so each build is a copy of core's dist with one constant
 * rewritten (made by the suite); this process imports each copy by path,
 * builds a RunStore from it on the subject's driver, creates a run with a
 * directory of many files and a large file, and reports what it wrote.
 *
 * Usage: node other-encoding-writer.js '<EncodingWriterRequest as JSON>'
 */
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import type { RunStore as RunStoreClass } from "@runledger/core";
import { loadDriver, readRequest, runChild, send } from "./common.js";
import type {
  EncodingWriterReport,
  EncodingWriterRequest,
  WrittenRun,
} from "./other-encoding-protocol.js";

/** Never outlive a forgotten test run. */
const LIFETIME_MS = 300_000;

interface CoreCopy {
  readonly RunStore: typeof RunStoreClass;
  readonly WORKSPACE_ENCODING_V1: string;
}

async function loadCopy(core: string): Promise<CoreCopy> {
  const index = await import(pathToFileURL(join(core, "dist", "index.js")).href);
  const engine = await import(pathToFileURL(join(core, "dist", "engine.js")).href);
  return { RunStore: index.RunStore, WORKSPACE_ENCODING_V1: engine.WORKSPACE_ENCODING_V1 };
}

async function main(): Promise<void> {
  const request = readRequest<EncodingWriterRequest>();
  const runs: WrittenRun[] = [];
  const put: Record<string, string | Uint8Array> = {};
  for (let i = 0; i < request.files; i++) {
    put[`dir/file-${String(i).padStart(4, "0")}.txt`] = `file ${i}\n`.repeat(1 + (i % 7));
  }
  const large = new Uint8Array(request.largeBytes);
  for (let i = 0; i < large.length; i++) large[i] = (i * 31) & 0xff;
  put["large.bin"] = large;
  for (const build of request.builds) {
    const { RunStore, WORKSPACE_ENCODING_V1 } = await loadCopy(build.core);
    const store = new RunStore({ driver: await loadDriver(request) });
    try {
      const lease = await store.open(build.location, { create: request.create });
      const { rootId } = await lease.transact((tx) => tx.workspace.apply({ put }));
      const listed = await lease.read(async (r) => (await r.workspace.list("dir")).length);
      await lease.release();
      runs.push({ encoding: WORKSPACE_ENCODING_V1, root: rootId, listed });
    } finally {
      await store.close();
    }
  }
  await send<EncodingWriterReport>({ state: "done", runs });
}

runChild(main, { lifetimeMs: LIFETIME_MS });
