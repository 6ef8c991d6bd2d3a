/**
 * Storage-constraint family (docs/contracts.md "A storage failure dooms the
 * transaction"): when SQLite refuses one of core's own rows for a reason no
 * valid call can cause — provoked here by a driver wrapper that changes one
 * value core binds, so that a real CHECK of the schema fails — the failure
 * keeps its own code, the whole transaction is doomed (every later call in
 * the callback is refused with that same failure, and nothing commits, even
 * when the callback catches it), and the lease goes on afterwards.
 * `invalid_stop_reason` stays confined to the one failure it names: a stop
 * whose reason names no journal event, after which the transaction goes on.
 */
import { type RunLease, RunledgerError, type RunTransaction } from "@runledger/core";
import { describe, expect, it } from "vitest";
import { type Fixtures, failureOf, refusalOf } from "../fixtures.js";
import { ValueRewriter } from "../rewrite.js";
import { openRun } from "./run-fixtures.js";
import { apply, dumpTables } from "./workspace-fixtures.js";

/** A value the tests pass through the API for the wrapper to replace before SQLite sees it. */
const SENTINEL = "replaced-before-sqlite-sees-it";

/** A run with one step done, whose statements go through a rewriter not yet armed. */
async function rewrittenRun(fx: Fixtures): Promise<{ lease: RunLease; rewriter: ValueRewriter }> {
  const rewriter = new ValueRewriter(fx.driver());
  const lease = await openRun(fx, fx.location(), { driver: rewriter.driver });
  await apply(lease, { put: { "before.txt": "before" } }, { event: { step: "before" } });
  return { lease, rewriter };
}

/**
 * Runs `failing` inside a transaction and then tries to go on writing, as a
 * callback that catches the failure would: returns the failure, what each
 * later call was refused with, and what the transaction itself threw.
 */
async function carryOnAfter(lease: RunLease, failing: (tx: RunTransaction) => Promise<unknown>) {
  let failure: unknown;
  const later: Record<string, unknown> = {};
  const thrown = await refusalOf(() =>
    lease.transact(async (tx) => {
      await tx.journal.append({ step: "inside, before the failure" });
      failure = await refusalOf(() => failing(tx));
      later.append = await refusalOf(() => tx.journal.append({ step: "after the failure" }));
      later.apply = await refusalOf(() => tx.workspace.apply({ put: { "after.txt": "never" } }));
      later.stop = await refusalOf(() => tx.run.stop({ status: "suspended" }));
      return "carried on";
    }),
  );
  expect(failure).toBeInstanceOf(RunledgerError);
  return { failure: failure as RunledgerError, later, thrown };
}

export function describeStorageConstraints(fx: Fixtures): void {
  describe("storage constraint failures", () => {
    it("a stop row SQLite refuses by a CHECK (its code 257 characters) fails constraint_check, not invalid_stop_reason, and dooms the transaction: later calls are refused with it and nothing commits", async () => {
      const { lease, rewriter } = await rewrittenRun(fx);
      const before = await dumpTables(lease);
      rewriter.arm({ statement: /^UPDATE run SET status/, from: SENTINEL, to: "c".repeat(257) });
      const { failure, later, thrown } = await carryOnAfter(lease, (tx) =>
        tx.run.stop({ status: "suspended", reason: { host: "worker-7", code: SENTINEL } }),
      );
      expect(rewriter.rewritten, "the stop statement was rewritten").toBe(1);
      expect(failure.code).toBe("constraint_check");
      expect(failure.message).toMatch(/CHECK/);
      for (const [call, refusal] of Object.entries(later)) {
        expect(refusal, `${call} after the failure`).toBe(failure);
      }
      expect(thrown, "the transaction fails with it, though the callback returned").toBe(failure);
      expect(await dumpTables(lease)).toStrictEqual(before);

      // The lease goes on; a stop whose reason names no event is still invalid_stop_reason, alone.
      rewriter.disarm();
      const confined = await lease.transact(async (tx) => {
        const refused = await failureOf(() =>
          tx.run.stop({ status: "suspended", reason: { event: 42 } }),
        );
        await tx.journal.append({ step: "after the refused stop" });
        await tx.run.stop({ status: "suspended", reason: { host: "worker-7", code: "SIGTERM" } });
        return refused;
      });
      expect(confined.code).toBe("invalid_stop_reason");
      const run = await lease.read((r) => r.run.get());
      expect([run.status, run.stopReason]).toEqual([
        "suspended",
        { host: "worker-7", code: "SIGTERM" },
      ]);
      expect((await lease.read((r) => r.journal.list())).map((e) => e.record)).toStrictEqual([
        { step: "before" },
        { step: "after the refused stop" },
      ]);
    });

    it("an event SQLite refuses by a CHECK (its record not an object) fails corrupt with constraint_check as its cause, and dooms the transaction: later calls are refused with it and nothing commits", async () => {
      const { lease, rewriter } = await rewrittenRun(fx);
      const before = await dumpTables(lease);
      const record = { probe: SENTINEL };
      rewriter.arm({
        statement: /^INSERT INTO journal/,
        from: JSON.stringify(record),
        to: "[]",
      });
      const { failure, later, thrown } = await carryOnAfter(lease, (tx) =>
        tx.journal.append(record),
      );
      expect(rewriter.rewritten, "the append was rewritten").toBeGreaterThanOrEqual(1);
      expect(failure.code).toBe("corrupt");
      expect(failure.message).toMatch(/verify/);
      expect(failure.cause).toBeInstanceOf(RunledgerError);
      expect((failure.cause as RunledgerError).code).toBe("constraint_check");
      for (const [call, refusal] of Object.entries(later)) {
        expect(refusal, `${call} after the failure`).toBe(failure);
      }
      expect(thrown, "the transaction fails with it, though the callback returned").toBe(failure);
      expect(await dumpTables(lease)).toStrictEqual(before);

      rewriter.disarm();
      await lease.transact((tx) => tx.journal.append(record));
      expect((await lease.read((r) => r.journal.list())).map((e) => e.record)).toStrictEqual([
        { step: "before" },
        record,
      ]);
    });
  });
}
