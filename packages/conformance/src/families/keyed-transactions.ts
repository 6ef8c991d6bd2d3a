/**
 * The keyed-transactions family (docs/api.md, `lease.transact(fn, { key })`):
 * a keyed transaction lands at most once. Its key is recorded in the same
 * transaction, so it exists exactly when the work committed; a second call
 * with the key runs nothing and fails `already_landed` with the sequences
 * the first appended; a transaction that failed left no key, so its retry
 * runs. After a kill at any statement, a retry by key in another process
 * finishes the step exactly once.
 */
import { isRunledgerError, type RunLease } from "@runledger/core";
import { describe, expect, it } from "vitest";
import {
  KEYED_STEP,
  type KeyedWriterReport,
  type KeyedWriterRequest,
  keyedStep,
} from "../child/keyed-writer-protocol.js";
import {
  ChildProcess,
  type ChildScript,
  type Fixtures,
  failureOf,
  subjectChild,
  thrownBy,
} from "../fixtures.js";
import { CREATE, openRun, runStore } from "./run-fixtures.js";

const KEYED_WRITER: ChildScript<KeyedWriterRequest, KeyedWriterReport> = {
  file: "keyed-writer",
  name: "keyed writer",
};

/** How long one keyed-writer process may take from spawn to exit. */
const WRITER_TIMEOUT_MS = 60_000;

/** The records of the run's journal, in order. */
async function records(lease: RunLease): Promise<unknown[]> {
  return (await lease.read((r) => r.journal.list())).map((event) => event.record);
}

export function describeKeyedTransactions(fx: Fixtures): void {
  describe("keyed transactions", () => {
    it("a keyed transaction lands once: a second call with its key runs nothing and fails already_landed with the sequences it appended", async () => {
      const lease = await openRun(fx, fx.location());
      await lease.transact((tx) => tx.journal.append({ n: 0 }));
      const result = await lease.transact(
        async (tx) => {
          await tx.journal.append({ n: 1 });
          await tx.journal.append({ n: 2 });
          return "ran";
        },
        { key: "step-a" },
      );
      expect(result).toBe("ran");
      let ranAgain = false;
      const again = await failureOf(() =>
        lease.transact(
          async (tx) => {
            ranAgain = true;
            await tx.journal.append({ n: 3 });
          },
          { key: "step-a" },
        ),
      );
      expect(ranAgain).toBe(false);
      expect(again.code).toBe("already_landed");
      expect(again.details).toMatchObject({ key: "step-a", firstSequence: 2, lastSequence: 3 });
      expect(typeof again.details?.committedAt).toBe("number");
      expect(again.message).toMatch(/events 2 to 3/);
      expect(await records(lease)).toStrictEqual([{ n: 0 }, { n: 1 }, { n: 2 }]);
      // Another key, and no key at all, still run.
      await lease.transact((tx) => tx.journal.append({ n: 3 }), { key: "step-b" });
      await lease.transact((tx) => tx.journal.append({ n: 4 }));
      expect(await records(lease)).toHaveLength(5);
    });

    it("a keyed transaction that appends nothing lands with no sequences, and is still landed once", async () => {
      const lease = await openRun(fx, fx.location());
      let ran = false;
      await lease.transact(
        async () => {
          ran = true;
        },
        { key: "nothing-appended" },
      );
      expect(ran).toBe(true);
      const again = await failureOf(() =>
        lease.transact(async () => {}, { key: "nothing-appended" }),
      );
      expect(again.code).toBe("already_landed");
      expect(again.details).toMatchObject({ firstSequence: null, lastSequence: null });
      expect(again.message).toMatch(/appended no event/);
    });

    it("a keyed transaction that fails records no key: its retry runs and lands", async () => {
      const lease = await openRun(fx, fx.location());
      const failed = await thrownBy(() =>
        lease.transact(
          async (tx) => {
            await tx.journal.append({ attempt: 1 });
            throw new Error("the step failed");
          },
          { key: "retried" },
        ),
      );
      expect(failed.message).toBe("the step failed");
      await lease.transact((tx) => tx.journal.append({ attempt: 2 }), { key: "retried" });
      expect(await records(lease)).toStrictEqual([{ attempt: 2 }]);
    });

    it("a malformed key or an unknown option is invalid_argument before anything is written", async () => {
      const lease = await openRun(fx, fx.location());
      for (const options of [{ key: "" }, { key: "k".repeat(513) }, { key: 7 }, { keys: "a" }]) {
        let ran = false;
        const error = await failureOf(() =>
          lease.transact(async (tx) => {
            ran = true;
            await tx.journal.append({ n: 1 });
          }, options as never),
        );
        expect([options, error.code, ran]).toStrictEqual([options, "invalid_argument", false]);
      }
      expect(await records(lease)).toStrictEqual([]);
      await lease.transact((tx) => tx.journal.append({ n: 1 }), { key: "k".repeat(512) });
    });

    it("keys are the run's: a second store, or a reopened lease, sees a landed key", async () => {
      const location = fx.location();
      const first = runStore(fx);
      const lease = await first.open(location, { create: CREATE });
      await lease.transact((tx) => tx.journal.append({ n: 1 }), { key: "once" });
      await lease.release();
      await first.close();
      const reopened = await runStore(fx).open(location);
      const again = await failureOf(() =>
        reopened.transact((tx) => tx.journal.append({ n: 2 }), { key: "once" }),
      );
      expect(again.code).toBe("already_landed");
      expect((await reopened.verify()).problems).toStrictEqual([]);
      await reopened.release();
    });

    fx.needs("childProcesses", "crashSafeLocks")
      .because("the writer is killed holding its locks, which must not outlive it")
      .it(
        "after a kill at any statement of a keyed step, a retry by its key in another process lands it exactly once",
        async () => {
          const child = subjectChild(fx.subject);
          const whole = await ChildProcess.start(KEYED_WRITER, child, {
            location: fx.location(),
          }).report(WRITER_TIMEOUT_MS);
          expect(whole.statements).toBeGreaterThan(5);
          const outcomes = { retried: 0, landed: 0 };
          for (let killAt = 1; killAt <= whole.statements; killAt++) {
            const location = fx.location();
            const exit = await ChildProcess.start(KEYED_WRITER, child, { location, killAt }).exited;
            expect([killAt, exit]).toStrictEqual([killAt, null]);
            const store = runStore(fx);
            const lease = await store.open(location, {
              create: { workflowId: "keyed-kills", runId: "run-1" },
            });
            let retried = true;
            try {
              await lease.transact(keyedStep, { key: KEYED_STEP });
            } catch (error) {
              if (!isRunledgerError(error, "already_landed")) throw error;
              retried = false;
            }
            const steps = (await records(lease)).filter(
              (record) => (record as { step?: string }).step === KEYED_STEP,
            );
            expect([killAt, steps.length]).toStrictEqual([killAt, 1]);
            outcomes[retried ? "retried" : "landed"] += 1;
            expect((await lease.verify()).problems).toStrictEqual([]);
            await lease.release();
            await store.close();
          }
          // Kills before the step's COMMIT leave it to the retry; kills after, landed.
          expect(outcomes.retried).toBeGreaterThan(0);
          expect(outcomes.landed).toBeGreaterThan(0);
        },
        600_000,
      );
  });
}
