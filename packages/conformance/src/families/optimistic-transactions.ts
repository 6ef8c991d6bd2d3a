/**
 * The optimistic-transactions family (docs/api.md, `lease.transact(fn, {
 * optimistic: true })`): on a server the transaction is sent whole, its
 * step's event written after the newest event the lease saw, unanswered; a
 * view another writer made stale, or any other refusal, lands nothing of it,
 * and the callback runs once more the ordinary way — whose outcome is the
 * caller's. A local connection ignores the option: the callback runs once.
 * Every subject proves the outcome is what an ordinary transaction's would
 * be; how many times the callback ran tells the two apart.
 */
import type { RunLease, RunTransaction } from "@runledger/core";
import { describe, expect, it } from "vitest";
import { type Fixtures, failureOf, thrownBy } from "../fixtures.js";
import { CREATE, openRun, runStore } from "./run-fixtures.js";

const OPTIMISTIC = { optimistic: true } as const;

/** The records of the run's journal, in order. */
async function records(lease: RunLease): Promise<unknown[]> {
  return (await lease.read((r) => r.journal.list())).map((event) => event.record);
}

/** A step: one small file and its event; `calls` counts the runs of its callback. */
function step(n: number, calls: { count: number }) {
  return (tx: RunTransaction) => {
    calls.count += 1;
    return tx.workspace.apply({ put: { [`steps/${n}.json`]: `{"n":${n}}` } }, { event: { n } });
  };
}

/** Two leases on one run, each on a store (and a connection) of its own: `mine` has seen event 1. */
async function twoWriters(fx: Fixtures): Promise<{ mine: RunLease; other: RunLease }> {
  const location = fx.location();
  const mine = await runStore(fx).open(location, { create: CREATE });
  await mine.transact(step(1, { count: 0 }), OPTIMISTIC);
  const other = await runStore(fx).open(location);
  return { mine, other };
}

export function describeOptimisticTransactions(fx: Fixtures): void {
  /** How many times a callback runs when the server refused its first attempt. */
  const refusedRuns = fx.remote ? 2 : 1;

  /**
   * A test of two stores holding one run open at once (`twoWriters`): a
   * server holds it for every client; a local file needs WAL's shared memory.
   */
  const twoStores = {
    it(name: string, test: () => Promise<void>): void {
      if (fx.remote) it(name, test);
      else {
        fx.needs("walSharedMemory")
          .because("another store holds the run open beside this one")
          .it(name, test);
      }
    },
  };

  describe("optimistic transactions", () => {
    it("an optimistic transaction commits what an ordinary one does, running its callback once", async () => {
      const lease = await openRun(fx, fx.location());
      const calls = { count: 0 };
      const results = [];
      for (let n = 1; n <= 3; n++) results.push(await lease.transact(step(n, calls), OPTIMISTIC));
      const appended = await lease.transact(
        (tx) => tx.journal.append({ n: 4 }, { key: "four" }),
        OPTIMISTIC,
      );
      expect(calls.count).toBe(3);
      expect(results.map((result) => result.sequence)).toStrictEqual([1, 2, 3]);
      expect(appended.sequence).toBe(4);
      const events = await lease.read((r) => r.journal.list());
      expect(events.map((event) => event.record)).toStrictEqual([
        { n: 1 },
        { n: 2 },
        { n: 3 },
        { n: 4 },
      ]);
      // What each step and the append said of themselves is what was stored.
      expect(events.slice(0, 3).map((event) => [event.sequence, event.rootId])).toStrictEqual(
        results.map((result) => [result.sequence, result.rootId]),
      );
      expect(events[3]?.eventId).toBe(appended.eventId);
      const file = await lease.read((r) => r.workspace.read("steps/3.json"));
      expect(new TextDecoder().decode(file)).toBe('{"n":3}');
      expect((await lease.verify()).problems).toStrictEqual([]);
    });

    twoStores.it(
      "an optimistic step on a view another writer made stale lands once, after that writer's event",
      async () => {
        const { mine, other } = await twoWriters(fx);
        await other.transact((tx) => tx.journal.append({ by: "other" }));
        const calls = { count: 0 };
        const result = await mine.transact(step(2, calls), OPTIMISTIC);
        expect(calls.count).toBe(refusedRuns);
        expect(result.sequence).toBe(3);
        expect(await records(mine)).toStrictEqual([{ n: 1 }, { by: "other" }, { n: 2 }]);
        const file = await mine.read((r) => r.workspace.read("steps/2.json"));
        expect(new TextDecoder().decode(file)).toBe('{"n":2}');
        // The lease's view is current again: its next step runs once.
        const next = { count: 0 };
        await mine.transact(step(3, next), OPTIMISTIC);
        expect(next.count).toBe(1);
        expect((await mine.verify()).problems).toStrictEqual([]);
      },
    );

    it("an optimistic transaction whose callback throws runs once, and nothing of it lands", async () => {
      const mine = await openRun(fx, fx.location());
      await mine.transact(step(1, { count: 0 }), OPTIMISTIC);
      let calls = 0;
      const error = await thrownBy(() =>
        mine.transact(async (tx) => {
          calls += 1;
          await tx.workspace.apply({ put: { "undone.json": "{}" } }, { event: { undone: true } });
          throw new Error("the step gave up");
        }, OPTIMISTIC),
      );
      expect(error.message).toBe("the step gave up");
      expect(calls).toBe(1);
      expect(await records(mine)).toStrictEqual([{ n: 1 }]);
    });

    twoStores.it(
      "an optimistic transaction the run refuses fails as an ordinary one does, after one more run the ordinary way",
      async () => {
        const { mine, other } = await twoWriters(fx);
        await other.transact((tx) => tx.run.stop({ status: "completed" }));
        let calls = 0;
        const error = await failureOf(() =>
          mine.transact(async (tx) => {
            calls += 1;
            await tx.journal.append({ late: true });
          }, OPTIMISTIC),
        );
        expect(error.code).toBe("run_finished");
        expect(calls).toBe(refusedRuns);
        expect(
          (await records(mine)).filter((record) => "late" in (record as object)),
        ).toStrictEqual([]);
      },
    );

    twoStores.it(
      "an optimistic transaction with a key that landed runs nothing and fails already_landed",
      async () => {
        const { mine, other } = await twoWriters(fx);
        await other.transact((tx) => tx.journal.append({ n: 2 }), { key: "two" });
        let calls = 0;
        const error = await failureOf(() =>
          mine.transact(
            async (tx) => {
              calls += 1;
              await tx.journal.append({ n: 2 });
            },
            { key: "two", optimistic: true },
          ),
        );
        expect(error.code).toBe("already_landed");
        expect(calls).toBe(0);
        expect(await records(mine)).toStrictEqual([{ n: 1 }, { n: 2 }]);
      },
    );

    it("optimistic is true or false: anything else is invalid_argument before anything is written", async () => {
      const lease = await openRun(fx, fx.location());
      for (const optimistic of ["yes", 1, null]) {
        let ran = false;
        const error = await failureOf(() =>
          lease.transact(
            async (tx) => {
              ran = true;
              await tx.journal.append({ n: 1 });
            },
            { optimistic } as never,
          ),
        );
        expect([optimistic, error.code, ran]).toStrictEqual([
          optimistic,
          "invalid_argument",
          false,
        ]);
      }
      await lease.transact((tx) => tx.journal.append({ n: 1 }), { optimistic: false });
      expect(await records(lease)).toStrictEqual([{ n: 1 }]);
    });
  });
}
