/**
 * Opens one run once and reports how the open ended and how much it read:
 * the read system calls and bytes the kernel counted for this process
 * (/proc/self/io) from just before `open` to just after. A process of its
 * own, so that nothing else of the suite reads meanwhile, and so that the
 * suite can start it as another user (a permission bit means nothing to root).
 *
 * Usage: node open-probe.js '<OpenProbeRequest as JSON>'
 */
import { readFileSync } from "node:fs";
import { RunStore } from "@runledger/core";
import { loadDriver, messageOf, readRequest, runChild, send } from "./common.js";
import type {
  OpenOutcome,
  OpenProbeReport,
  OpenProbeRequest,
  ReadCounters,
} from "./open-probe-protocol.js";

/** Never outlive a forgotten test run. */
const LIFETIME_MS = 120_000;

async function main(): Promise<void> {
  const request = readRequest<OpenProbeRequest>();
  const store = new RunStore({ driver: await loadDriver(request), busyTimeoutMs: 10_000 });
  try {
    if (request.warmUp !== undefined) await (await store.open(request.warmUp)).release();
    const options = request.readOnly === true ? { readOnly: true } : {};
    const before = readCounters();
    let outcome: OpenOutcome;
    let release = async (): Promise<void> => {};
    try {
      const lease = await store.open(request.location, options);
      outcome = { ok: true };
      release = () => lease.release();
    } catch (error) {
      const { code, details } = error as { code?: unknown; details?: Record<string, unknown> };
      outcome = {
        ok: false,
        code: typeof code === "string" ? code : undefined,
        message: messageOf(error),
        details,
      };
    }
    const after = readCounters();
    await release();
    const reads =
      before === undefined || after === undefined
        ? undefined
        : { rchar: after.rchar - before.rchar, syscr: after.syscr - before.syscr };
    await send<OpenProbeReport>({ state: "done", outcome, reads });
  } finally {
    await store.close();
  }
}

/** This process's read counters, or undefined where the kernel offers none. */
function readCounters(): ReadCounters | undefined {
  let text: string;
  try {
    text = readFileSync("/proc/self/io", "utf8");
  } catch {
    return undefined;
  }
  const value = (name: string): number =>
    Number(new RegExp(`^${name}: (\\d+)$`, "m").exec(text)?.[1]);
  return { rchar: value("rchar"), syscr: value("syscr") };
}

runChild(main, { lifetimeMs: LIFETIME_MS });
