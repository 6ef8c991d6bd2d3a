/**
 * A second process that works on a run database through core with its own
 * driver — the subject's own (to build fixtures no handle of the suite's
 * process has ever touched) or another adapter's (cross-adapter files). It
 * opens (or creates) the run, appends, optionally verifies and checkpoints,
 * reports one JSON line and exits.
 *
 * Usage: node run-peer.js '<PeerRequest as JSON>'
 */
import { isAbsolute } from "node:path";
import { pathToFileURL } from "node:url";
import { type AppendResult, type Driver, RunStore } from "@runledger/core";
import type { PeerReport, PeerRequest } from "./run-peer-protocol.js";

/** Never outlive a forgotten test run. */
const LIFETIME_MS = 120_000;

function send(report: PeerReport): Promise<void> {
  const line = JSON.stringify(report, (_key, value: unknown) =>
    typeof value === "bigint" ? Number(value) : value,
  );
  return new Promise((resolve) => process.stdout.write(`${line}\n`, () => resolve()));
}

async function loadDriver(request: PeerRequest): Promise<Driver> {
  const specifier = isAbsolute(request.module)
    ? pathToFileURL(request.module).href
    : request.module;
  const exports = (await import(specifier)) as Record<string, unknown>;
  const factory = exports[request.exportName];
  if (typeof factory !== "function") {
    throw new Error(`${request.module} has no function export named ${request.exportName}`);
  }
  return (factory as () => Driver)();
}

async function main(): Promise<void> {
  const request = JSON.parse(process.argv[2] ?? "") as PeerRequest;
  const driver = await loadDriver(request);
  let ids = 0;
  const fixed = request.clock;
  const prefix = request.idPrefix;
  const store = new RunStore({
    driver,
    ...(fixed === undefined ? {} : { clock: () => fixed }),
    ...(prefix === undefined ? {} : { newId: () => `${prefix}${++ids}` }),
  });
  let report: PeerReport;
  try {
    const lease = await store.open(
      request.location,
      request.create === undefined ? {} : { create: request.create },
    );
    const appends = request.appends ?? [];
    const appended =
      appends.length === 0
        ? []
        : await lease.transact(async (tx) => {
            const results: AppendResult[] = [];
            for (const { record, key } of appends) {
              results.push(await tx.journal.append(record, key === undefined ? {} : { key }));
            }
            return results;
          });
    const { run, events } = await lease.read(async (r) => ({
      run: await r.run.get(),
      events: await r.journal.list({ limit: 1_000_000 }),
    }));
    const verified = request.verify === true ? await lease.verify() : null;
    await lease.release();
    report = {
      state: "done",
      driver: driver.name,
      run,
      events,
      appended,
      verify:
        verified === null
          ? null
          : { ok: verified.ok, problems: verified.problems, events: verified.counts.events },
      checkpoint: null,
    };
  } finally {
    await store.close();
  }
  if (request.checkpoint === true) {
    const connection = await driver.open(request.location, {
      create: false,
      readOnly: false,
      busyTimeoutMs: 5_000,
    });
    try {
      const { rows } = await connection.execute("PRAGMA wal_checkpoint(TRUNCATE)");
      report = { ...report, checkpoint: Object.values(rows[0] ?? {}).map(Number) };
    } finally {
      await connection.close();
    }
  }
  await send(report);
}

setTimeout(() => process.exit(3), LIFETIME_MS).unref();

main().then(
  () => process.exit(0),
  async (error: unknown) => {
    const code = (error as { code?: unknown } | null)?.code;
    await send({
      state: "failed",
      ...(typeof code === "string" ? { code } : {}),
      message: error instanceof Error ? (error.stack ?? error.message) : String(error),
    });
    process.exit(1);
  },
);
