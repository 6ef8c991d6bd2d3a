/**
 * A second process that works on a run database through core with its own
 * driver — the subject's own (to build fixtures no handle of the suite's
 * process has ever touched) or another adapter's (cross-adapter files). It
 * opens (or creates) the run, appends, optionally verifies and checkpoints,
 * reports one JSON line and exits.
 *
 * Usage: node run-peer.js '<PeerRequest as JSON>'
 */
import { type AppendResult, RunStore } from "@runledger/core";
import { loadDriver, readRequest, runChild, send } from "./common.js";
import type { PeerReport, PeerRequest } from "./run-peer-protocol.js";

/** Never outlive a forgotten test run. */
const LIFETIME_MS = 120_000;

/** JSON has no bigint: a bigint in a report (an integer core read from SQLite) goes out as a number. */
function bigintsAsNumbers(_key: string, value: unknown): unknown {
  return typeof value === "bigint" ? Number(value) : value;
}

async function main(): Promise<void> {
  const request = readRequest<PeerRequest>();
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
  await send(report, bigintsAsNumbers);
}

runChild(main, { lifetimeMs: LIFETIME_MS });
