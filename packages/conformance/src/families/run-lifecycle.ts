/**
 * The run lifecycle as a state machine (docs/contracts.md): every
 * transition, allowed and refused, through the API and beneath it. A
 * terminal run (completed, failed, cancelled) takes no append, apply, stop or
 * resume (`run_finished`); a suspended or interrupted one takes no event and
 * no non-terminal stop until `tx.run.resume()` (`run_not_running`), which
 * records its own event; a refusal writes nothing. SQLite's triggers refuse
 * the same moves for a raw writer.
 */
import type { RunLease, RunStatus, StopStatus } from "@runledger/core";
import { describe, expect, it } from "vitest";
import { type Fixtures, failureOf } from "../fixtures.js";
import { openRun, raw } from "./run-fixtures.js";

const TERMINAL: readonly StopStatus[] = ["completed", "failed", "cancelled"];
const PAUSED: readonly StopStatus[] = ["suspended", "interrupted"];
const ALL_STOPS: readonly StopStatus[] = [...PAUSED, ...TERMINAL];

/** What a refusal must leave unchanged: the run row, the journal, the current root. */
async function state(lease: RunLease) {
  return lease.read(async (r) => ({
    run: await r.run.get(),
    events: await r.journal.list(),
    root: await r.workspace.currentRoot(),
  }));
}

/** A run with one event, stopped in `status` with that event as its reason. */
async function stoppedRun(fx: Fixtures, status: StopStatus): Promise<RunLease> {
  const lease = await openRun(fx, fx.location());
  await lease.transact(async (tx) => {
    const { sequence } = await tx.journal.append({ kind: "step", n: 1 });
    await tx.run.stop({ status, reason: { event: sequence } });
  });
  return lease;
}

type Attempt = [what: string, attempt: () => Promise<unknown>];

/** The content writes a stopped run refuses whatever it stopped as: append, keyed append, apply. */
function contentWrites(lease: RunLease): Attempt[] {
  return [
    ["append", () => lease.transact((tx) => tx.journal.append({ n: 2 }))],
    ["keyed append", () => lease.transact((tx) => tx.journal.append({ n: 2 }, { key: "k" }))],
    ["apply", () => lease.transact((tx) => tx.workspace.apply({ put: { a: "a" } }))],
  ];
}

/** Every attempt fails with `code` and a message that says what to do; the run is left as it was. */
async function expectRefused(
  lease: RunLease,
  attempts: readonly Attempt[],
  code: string,
  advice: RegExp,
): Promise<void> {
  const before = await state(lease);
  for (const [what, attempt] of attempts) {
    const error = await failureOf(attempt);
    expect(error.code, what).toBe(code);
    expect(error.message, what).toMatch(advice);
  }
  expect(await state(lease)).toEqual(before);
}

export function describeRunLifecycle(fx: Fixtures): void {
  describe("run lifecycle", () => {
    describe("from running", () => {
      for (const status of ALL_STOPS) {
        it(`stops as ${status}`, async () => {
          const lease = await openRun(fx, fx.location());
          const run = await lease.transact((tx) =>
            tx.run.stop({ status, reason: { host: "h", code: "c" } }),
          );
          expect([run.status, run.stopReason]).toEqual([status, { host: "h", code: "c" }]);
        });
      }

      it("appends and applies", async () => {
        const lease = await openRun(fx, fx.location());
        const appended = await lease.transact((tx) => tx.journal.append({ n: 1 }));
        const applied = await lease.transact((tx) => tx.workspace.apply({ put: { a: "a" } }));
        expect([appended.sequence, applied.sequence]).toEqual([1, 2]);
      });

      it("refuses a resume with run_not_stopped and writes nothing", async () => {
        const lease = await openRun(fx, fx.location());
        const before = await state(lease);
        const error = await failureOf(() => lease.transact((tx) => tx.run.resume()));
        expect(error.code).toBe("run_not_stopped");
        expect(await state(lease)).toEqual(before);
      });
    });

    for (const status of PAUSED) {
      describe(`from ${status}`, () => {
        it("refuses append, apply and a non-terminal stop with run_not_running, writing nothing", async () => {
          const lease = await stoppedRun(fx, status);
          const stops = PAUSED.map(
            (to): Attempt => [
              `stop as ${to}`,
              () => lease.transact((tx) => tx.run.stop({ status: to })),
            ],
          );
          await expectRefused(
            lease,
            [...contentWrites(lease), ...stops],
            "run_not_running",
            /resume/,
          );
        });

        it("lets the caller go on in the transaction after a refused append", async () => {
          const lease = await stoppedRun(fx, status);
          const resumed = await lease.transact(async (tx) => {
            const error = await failureOf(() => tx.journal.append({ n: 2 }));
            expect(error.code).toBe("run_not_running");
            return tx.run.resume();
          });
          expect(resumed.sequence).toBe(2);
        });

        for (const to of TERMINAL) {
          it(`stops as ${to}`, async () => {
            const lease = await stoppedRun(fx, status);
            const run = await lease.transact((tx) => tx.run.stop({ status: to }));
            expect([run.status, run.stopReason]).toEqual([to, null]);
          });
        }

        it("resumes through tx.run.resume(), which records its event, then appends again", async () => {
          const lease = await stoppedRun(fx, status);
          const resumed = await lease.transact((tx) => tx.run.resume());
          expect(resumed.sequence).toBe(2);
          const after = await state(lease);
          expect([after.run.status, after.run.stopReason]).toEqual(["running", null]);
          expect(after.events.map((e) => e.record)).toEqual([
            { kind: "step", n: 1 },
            { kind: "run.resumed", from: status },
          ]);
          expect(after.events[1]?.eventId).toBe(resumed.eventId);
          const next = await lease.transact((tx) => tx.journal.append({ n: 3 }));
          expect(next.sequence).toBe(3);
        });

        it("records the caller's own resume event when given one", async () => {
          const lease = await stoppedRun(fx, status);
          await lease.transact((tx) => tx.run.resume({ event: { kind: "retry", by: "operator" } }));
          const { events } = await state(lease);
          expect(events.at(-1)?.record).toEqual({ kind: "retry", by: "operator" });
        });
      });
    }

    for (const status of TERMINAL) {
      describe(`from ${status}`, () => {
        it("refuses append, apply, every stop and resume with run_finished, writing nothing", async () => {
          const lease = await stoppedRun(fx, status);
          const resume: Attempt = ["resume", () => lease.transact((tx) => tx.run.resume())];
          const stops = ALL_STOPS.map(
            (to): Attempt => [
              `stop as ${to}`,
              () => lease.transact((tx) => tx.run.stop({ status: to, reason: { event: 1 } })),
            ],
          );
          await expectRefused(
            lease,
            [...contentWrites(lease), resume, ...stops],
            "run_finished",
            /fork/,
          );
        });
      });
    }

    it("keeps a completed run's stop reason when the README example runs twice", async () => {
      const location = fx.location();
      const example = async (lease: RunLease) =>
        lease.transact(async (tx) => {
          await tx.journal.append({ kind: "step.started", step: "fetch" });
          await tx.workspace.apply({ put: { "out.txt": "done" } });
          const { sequence } = await tx.journal.append({ kind: "run.completed" });
          await tx.run.stop({ status: "completed", reason: { event: sequence } });
        });
      const first = await openRun(fx, location);
      await example(first);
      const before = await state(first);
      expect(before.run.stopReason).toEqual({ event: 3 });
      expect((await failureOf(() => example(first))).code).toBe("run_finished");
      expect(await state(first)).toEqual(before);
    });

    // biome-ignore format: gated registration
    fx.needs("extendedErrorCodes").it("is kept by SQLite for a raw writer too", async () => {
      const refusals: [StopStatus, string][] = [
        ["completed", "UPDATE run SET status = 'running', stop_event = NULL"],
        ["failed", "UPDATE run SET updated_at = updated_at + 1"],
        ["cancelled", "UPDATE run SET status = 'completed'"],
        ["suspended", "UPDATE run SET status = 'interrupted'"],
        ["interrupted", "UPDATE run SET status = 'suspended'"],
        ...[...PAUSED, ...TERMINAL].map((status): [StopStatus, string] => [
          status,
          `INSERT INTO journal (sequence, event_id, record, root_id, written_at, digest)
SELECT 2, 'raw', '{}', root_id, 0, zeroblob(32) FROM workspace_current`,
        ]),
      ];
      for (const [status, sql] of refusals) {
        const lease = await stoppedRun(fx, status);
        const before = await state(lease);
        await lease.release();
        const error = await failureOf(() => raw(fx, lease.location, [sql]));
        expect([error.code, error.sqliteCode], `${status}: ${sql}`).toEqual([
          "constraint",
          "SQLITE_CONSTRAINT_TRIGGER",
        ]);
        const reopened = await openRun(fx, lease.location);
        expect(await state(reopened), `${status}: ${sql}`).toEqual(before);
      }
      // Allowed beneath the API as above it: a paused run ends, or runs again.
      for (const [from, sql, to] of [
        ["suspended", "UPDATE run SET status = 'cancelled'", "cancelled"],
        ["interrupted", "UPDATE run SET status = 'running', stop_event = NULL", "running"],
      ] as [StopStatus, string, RunStatus][]) {
        const lease = await stoppedRun(fx, from);
        await lease.release();
        await raw(fx, lease.location, [sql]);
        const reopened = await openRun(fx, lease.location);
        expect((await state(reopened)).run.status).toBe(to);
      }
    });
  });
}
