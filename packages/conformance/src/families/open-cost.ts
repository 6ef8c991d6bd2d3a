/**
 * Opening a run costs O(schema), never O(data) (docs/file-format.md): an
 * open reads the header and `sqlite_schema`, the singleton rows and the
 * newest event, whatever the run holds. Proven by comparing what an open
 * reads on an empty run and on one of 100,000 events (5,000 on a server):
 * the statements it issues, which must be the same, and — on a local file —
 * the bytes the process reads, which may differ only by the few pages a
 * deeper b-tree adds to a lookup. The statements catch work repeated per row
 * or per page of rows; they miss a `count(*)`, whether its own statement
 * (both opens issue it) or inside one the open already runs. The bytes
 * catch both.
 */
import { existsSync } from "node:fs";
import { RunStore } from "@runledger/core";
import { describe, expect, it } from "vitest";
import type { OpenProbeReport, OpenProbeRequest } from "../child/open-probe-protocol.js";
import { FaultInjector } from "../faults.js";
import { ChildProcess, type ChildScript, type Fixtures, subjectChild } from "../fixtures.js";
import { unavailable } from "../requirements.js";
import { CREATE, createdRun, pragma, runStore } from "./run-fixtures.js";

/** The large run's events, written in TRANSACTIONS transactions. */
const EVENTS = 100_000;
/**
 * On a server every statement is a round trip (100,000 events took five
 * minutes over http): the statements are compared on a smaller run there.
 * A statement repeated per row or per page of rows shows at any size.
 */
const REMOTE_EVENTS = 5_000;
const TRANSACTIONS = 10;
/** Every FILE_EVERY-th event publishes a new root (a file added), so the object table grows too. */
const FILE_EVERY = 10;
/**
 * How many more pages an open of the large run may read: the newest event
 * and the current root sit under a few more b-tree levels than in a run of
 * one row each. A scan of either table reads hundreds.
 */
const SLACK_PAGES = 8;
/** How long an open-probe process may take from spawn to exit. */
const PROBE_TIMEOUT_MS = 60_000;

const OPEN_PROBE: ChildScript<OpenProbeRequest, OpenProbeReport> = {
  file: "open-probe",
  name: "open probe",
};

/** Runs one open-probe process to completion with the subject's driver. */
export function probeOpen(
  fx: Fixtures,
  work: Omit<OpenProbeRequest, "module" | "exportName">,
  as?: { readonly uid: number; readonly gid: number },
): Promise<Extract<OpenProbeReport, { state: "done" }>> {
  return ChildProcess.start(OPEN_PROBE, subjectChild(fx.subject), work, as).report(
    PROBE_TIMEOUT_MS,
  );
}

/** Whether this kernel counts each process's reads (Linux's /proc/self/io). */
const COUNTS_READS = existsSync("/proc/self/io");

export function describeOpenCost(fx: Fixtures): void {
  const events = fx.remote ? REMOTE_EVENTS : EVENTS;
  const largeRun = largeRunOnce(fx, events);

  describe("an open reads O(schema), never O(data)", () => {
    it(`issues the same statements on an empty run and on one of ${events.toLocaleString("en")} events`, async () => {
      const empty = await openStatements(fx, await createdRun(fx));
      const large = await openStatements(fx, await largeRun());
      expect(empty.length).toBeGreaterThan(0);
      expect(large).toEqual(empty);
    }, 300_000);

    const bytes = `reads as many bytes from a run of ${EVENTS.toLocaleString("en")} events as from an empty one, within ${SLACK_PAGES} pages`;
    const measured = COUNTS_READS
      ? fx
          .needs("files", "childProcesses", "local")
          .because("the bytes are counted for a local process reading its own file")
      : unavailable("/proc/self/io", "the kernel's count of a process's reads, on Linux");
    measured.it(
      bytes,
      async ({ annotate }) => {
        const warmUp = await createdRun(fx);
        const emptyLocation = await createdRun(fx);
        const largeLocation = await largeRun();
        const empty = await probeOpen(fx, { location: emptyLocation, warmUp });
        const large = await probeOpen(fx, { location: largeLocation, warmUp });
        expect([empty.outcome, large.outcome]).toEqual([{ ok: true }, { ok: true }]);
        if (empty.reads === undefined || large.reads === undefined) {
          return expect.fail("the open probe could not read /proc/self/io");
        }
        const pageSize = Number(await pragma(fx, largeLocation, "page_size"));
        await annotate(
          `an open read ${empty.reads.rchar} bytes in ${empty.reads.syscr} calls from an empty run, ` +
            `${large.reads.rchar} bytes in ${large.reads.syscr} calls from one of ${EVENTS} events ` +
            `(pages of ${pageSize} bytes)`,
        );
        expect(empty.reads.rchar).toBeGreaterThan(0);
        expect(Math.abs(large.reads.rchar - empty.reads.rchar)).toBeLessThanOrEqual(
          SLACK_PAGES * pageSize,
        );
        expect(Math.abs(large.reads.syscr - empty.reads.syscr)).toBeLessThanOrEqual(SLACK_PAGES);
      },
      300_000,
    );
  });
}

/** The statements one plain open of `location` issues, traced through a wrapper. */
async function openStatements(fx: Fixtures, location: string): Promise<string[]> {
  const tracer = new FaultInjector(fx.driver());
  const lease = await runStore(fx, { driver: tracer.driver }).open(location);
  const opened = [...tracer.statements];
  await lease.release();
  return opened;
}

/**
 * A run of `events` events, every FILE_EVERY-th adding a file, built once per
 * suite through the API in a few large transactions and verified; every
 * connection to it is closed when it is handed out.
 */
function largeRunOnce(fx: Fixtures, events: number): () => Promise<string> {
  let made: Promise<string> | undefined;
  return () => {
    made ??= (async () => {
      const location = fx.location();
      const store = new RunStore({ driver: fx.driver() });
      try {
        const lease = await store.open(location, { create: CREATE });
        const perTransaction = events / TRANSACTIONS;
        for (let batch = 0; batch < TRANSACTIONS; batch++) {
          await lease.transact(async (tx) => {
            for (let i = 0; i < perTransaction; i++) {
              const step = batch * perTransaction + i;
              if (step % FILE_EVERY === 0) {
                const content = `the content of file ${step}; `.repeat(12);
                await tx.workspace.apply(
                  { put: { [`files/${step}.txt`]: content } },
                  {
                    event: { step },
                  },
                );
              } else {
                await tx.journal.append({ step });
              }
            }
          });
        }
        const counts = await lease.read((r) => r.counts());
        expect(counts.events).toBe(events);
        expect(counts.objects).toBeGreaterThan(events / FILE_EVERY);
        const report = await lease.verify();
        expect(report.problems).toEqual([]);
        await lease.release();
      } finally {
        await store.close();
      }
      return location;
    })();
    return made;
  };
}
