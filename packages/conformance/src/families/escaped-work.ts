/**
 * Escaped work (docs/contracts.md, "Misuse fails loudly"): work a callback
 * starts on its `tx` (or snapshot) and does not await before returning is
 * refused with `callback_escaped` on every backend alike, whether the driver
 * had already run its statements (a synchronous one usually has) or not.
 * Nothing of the transaction is written; the escaped promise rejects with
 * that same error whenever it is awaited; and nothing reaches the process as
 * an unhandled rejection.
 */
import type { RunLease, RunSnapshot, RunTransaction } from "@runledger/core";
import type { ReadScope, WriteScope } from "@runledger/core/engine";
import { describe, expect, it, onTestFinished } from "vitest";
import { asyncIterableOf, codeOf, type Fixtures, failureOf } from "../fixtures.js";
import { column, seededLocation, store } from "./contract-fixtures.js";
import { openRun } from "./run-fixtures.js";

/** What escaped work must leave unchanged: the journal, the run row, the current root. */
async function state(lease: RunLease) {
  return lease.read(async (r) => ({
    events: await r.journal.list(),
    run: await r.run.get(),
    root: await r.workspace.currentRoot(),
  }));
}

/**
 * The process's unhandledRejection reports from now until the test ends.
 * `settled()` waits for the condition under which any rejection left
 * unhandled so far has been reported: Node reports them once the microtask
 * queue is drained, before the event loop's next turn — so one turn after the
 * escaped work has settled (the caller first runs another transaction on the
 * lease, which the escaped work's statements precede) is enough.
 */
function unhandledRejections(): { readonly seen: unknown[]; settled(): Promise<unknown[]> } {
  const seen: unknown[] = [];
  const listener = (reason: unknown) => seen.push(reason);
  process.on("unhandledRejection", listener);
  onTestFinished(() => {
    process.off("unhandledRejection", listener);
  });
  return {
    seen,
    async settled() {
      await new Promise((resolve) => setImmediate(resolve));
      return seen;
    },
  };
}

/** The work a test deliberately left running inside a callback; the test fails if it never started. */
function started(stray: Promise<unknown> | undefined): Promise<unknown> {
  expect(stray, "the stray work was started").toBeDefined();
  return stray!;
}

/**
 * Polls `condition` (each poll awaited inside the callback, one event-loop
 * turn apart so that an asynchronous driver progresses) until it holds; a
 * poll refused with savepoint_overlap (the stray work's savepoint is still
 * open) counts as not yet. Fails after a generous deadline.
 */
async function until(condition: () => Promise<boolean>, what: string): Promise<void> {
  const deadline = Date.now() + 30_000;
  for (;;) {
    const held = await condition().catch((error: unknown) => {
      if ((error as { code?: unknown }).code === "savepoint_overlap") return false;
      throw error;
    });
    if (held) return;
    if (Date.now() > deadline) expect.fail(`timed out waiting until ${what}`);
    await new Promise((resolve) => setImmediate(resolve));
  }
}

type Escape = [what: string, start: (tx: RunTransaction) => Promise<unknown>];

/** One call of each kind the run API offers, left unawaited by the callback. */
const ESCAPES: readonly Escape[] = [
  ["append", (tx) => tx.journal.append({ kind: "escaped" })],
  ["keyed append", (tx) => tx.journal.append({ kind: "escaped" }, { key: "escaped-key" })],
  ["apply", (tx) => tx.workspace.apply({ put: { "escaped.txt": "escaped" } })],
  ["stop", (tx) => tx.run.stop({ status: "completed", reason: { host: "h", code: "c" } })],
  ["savepoint", (tx) => tx.savepoint((sp) => sp.journal.append({ kind: "escaped" }))],
];

/** A run with one committed event, so that "unchanged" is not the empty run. */
async function runWithOneEvent(fx: Fixtures): Promise<RunLease> {
  const lease = await openRun(fx, fx.location());
  await lease.transact((tx) => tx.journal.append({ kind: "before" }));
  return lease;
}

/**
 * What every escape must end in: the transaction refused with
 * callback_escaped (a message that says to await), the run unchanged, the
 * stray rejecting with callback_escaped when awaited now, the lease writing
 * again, and no unhandled rejection.
 */
async function expectRefusedEscape(
  lease: RunLease,
  callback: (tx: RunTransaction) => Promise<unknown>,
  stray: () => Promise<unknown> | undefined,
): Promise<void> {
  const unhandled = unhandledRejections();
  const before = await state(lease);
  const error = await failureOf(() => lease.transact(callback));
  expect(error.code).toBe("callback_escaped");
  expect(error.message).toMatch(/await every call on tx/i);
  expect(await state(lease), "nothing of the transaction was written").toEqual(before);
  const late = await failureOf(() => started(stray()));
  expect(late.code, "the escaped promise, awaited afterwards").toBe("callback_escaped");
  const next = await lease.transact((tx) => tx.journal.append({ kind: "after" }));
  expect(next.sequence).toBe(before.events.length + 1);
  expect(await unhandled.settled(), "unhandled rejections").toStrictEqual([]);
}

export function describeEscapedWork(fx: Fixtures): void {
  describe("escaped work", () => {
    describe("a transaction callback that returns without awaiting", () => {
      for (const [what, start] of ESCAPES) {
        it(`an unawaited ${what} is refused with callback_escaped, writes nothing, and rejects with it later`, async () => {
          const lease = await runWithOneEvent(fx);
          let stray: Promise<unknown> | undefined;
          await expectRefusedEscape(
            lease,
            async (tx) => {
              stray = start(tx);
            },
            () => stray,
          );
        });
      }

      it("escaped calls that are never awaited leave no unhandled rejection behind", async () => {
        const lease = await runWithOneEvent(fx);
        const unhandled = unhandledRejections();
        const before = await state(lease);
        for (const [what, start] of ESCAPES) {
          const error = await failureOf(() =>
            lease.transact(async (tx) => {
              void start(tx);
            }),
          );
          expect(error.code, what).toBe("callback_escaped");
        }
        expect(await state(lease)).toEqual(before);
        await lease.transact((tx) => tx.journal.append({ kind: "after" }));
        expect(await unhandled.settled(), "unhandled rejections").toStrictEqual([]);
      });

      it("an unawaited append whose statement already ran is refused alike, and its event is not committed", async () => {
        const lease = await runWithOneEvent(fx);
        let stray: Promise<unknown> | undefined;
        await expectRefusedEscape(
          lease,
          async (tx) => {
            stray = tx.journal.append({ kind: "escaped" });
            // Without awaiting the append: its event is visible in this transaction.
            await until(async () => (await tx.journal.list()).length === 2, "the append ran");
          },
          () => stray,
        );
      });

      it("an unawaited apply whose work already finished is refused alike", async () => {
        const lease = await runWithOneEvent(fx);
        let stray: Promise<unknown> | undefined;
        await expectRefusedEscape(
          lease,
          async (tx) => {
            stray = tx.workspace.apply({ put: { "escaped.txt": "escaped" } });
            await until(
              async () => (await tx.workspace.list()).some((entry) => entry.name === "escaped.txt"),
              "the apply published its root",
            );
          },
          () => stray,
        );
      });

      it("work consumed with .catch but still running when the callback returns is refused alike", async () => {
        const lease = await runWithOneEvent(fx);
        let stray: Promise<unknown> | undefined;
        await expectRefusedEscape(
          lease,
          async (tx) => {
            // An apply of a streamed file reads the stream before it writes: still running here,
            // on every driver (an apply of small files given whole, done at once on a
            // synchronous one, would not be).
            const content = asyncIterableOf([new TextEncoder().encode("escaped")]);
            stray = tx.workspace.apply({ put: { "escaped.txt": content } });
            stray.catch(() => undefined);
          },
          () => stray,
        );
      });

      it("a callback that throws after leaving work behind fails with its own error, and the work with callback_escaped", async () => {
        const lease = await runWithOneEvent(fx);
        const unhandled = unhandledRejections();
        const before = await state(lease);
        let stray: Promise<unknown> | undefined;
        const own = new Error("the callback's own failure");
        const thrown = await lease
          .transact(async (tx) => {
            stray = tx.journal.append({ kind: "escaped" });
            throw own;
          })
          .catch((error: unknown) => error);
        expect(thrown).toBe(own);
        expect(await state(lease)).toEqual(before);
        expect(await codeOf(started(stray))).toBe("callback_escaped");
        expect(await unhandled.settled(), "unhandled rejections").toStrictEqual([]);
      });
    });

    it("a savepoint whose callback leaves an append behind is refused and undone, and the transaction goes on", async () => {
      const lease = await runWithOneEvent(fx);
      const unhandled = unhandledRejections();
      let stray: Promise<unknown> | undefined;
      const outcome = await lease.transact(async (tx) => {
        const refused = await failureOf(() =>
          tx.savepoint(async (sp) => {
            await sp.workspace.apply({ put: { "undone.txt": "undone" } });
            stray = sp.journal.append({ kind: "escaped" });
          }),
        );
        await tx.journal.append({ kind: "kept" });
        return refused;
      });
      expect(outcome.code).toBe("callback_escaped");
      expect(outcome.message).toMatch(/await every call on tx/i);
      expect(await codeOf(started(stray))).toBe("callback_escaped");
      const after = await state(lease);
      expect(after.events.map((event) => event.record)).toStrictEqual([
        { kind: "before" },
        { kind: "kept" },
      ]);
      expect(await lease.read((r) => r.workspace.list())).toStrictEqual([]);
      expect(await unhandled.settled(), "unhandled rejections").toStrictEqual([]);
    });

    it("a snapshot callback that returns without awaiting a read is refused with callback_escaped", async () => {
      const lease = await runWithOneEvent(fx);
      const unhandled = unhandledRejections();
      for (const read of [
        (r: RunSnapshot) => r.journal.list(),
        (r: RunSnapshot) => r.workspace.currentRoot(),
        (r: RunSnapshot) => r.run.get(),
      ]) {
        let stray: Promise<unknown> | undefined;
        const error = await failureOf(() =>
          lease.read(async (r) => {
            stray = read(r);
          }),
        );
        expect(error.code).toBe("callback_escaped");
        expect(await codeOf(started(stray))).toBe("callback_escaped");
      }
      expect((await state(lease)).events).toHaveLength(1);
      expect(await unhandled.settled(), "unhandled rejections").toStrictEqual([]);
    });

    it("a call awaited later inside the callback is not escaped, and one that failed first is no unhandled rejection meanwhile", async () => {
      const lease = await runWithOneEvent(fx);
      const unhandled = unhandledRejections();
      const codes = await lease.transact(async (tx) => {
        const refused = tx.journal.append({ kind: "bad" }, { key: "" });
        const appended = tx.journal.append({ kind: "late" });
        await tx.workspace.apply({ put: { "a.txt": "a" } });
        // An event-loop turn: a rejection without a handler would be reported by now.
        await unhandled.settled();
        return [await codeOf(refused), (await appended).sequence];
      });
      expect(codes).toStrictEqual(["invalid_argument", 2]);
      expect((await state(lease)).events).toHaveLength(3);
      expect(await unhandled.settled(), "unhandled rejections").toStrictEqual([]);
    });

    describe("on the engine's scopes", () => {
      const LOG = "CREATE TABLE log (x INTEGER NOT NULL)";
      const insert = (scope: WriteScope | ReadScope, x: number) =>
        scope.execute("INSERT INTO log (x) VALUES (?)", [x]);

      it("an unawaited statement or savepoint is refused with callback_escaped, and nothing is written", async () => {
        const s = store(fx);
        const lease = await s.open(await seededLocation(fx, LOG));
        const unhandled = unhandledRejections();
        for (const start of [
          (tx: WriteScope) => insert(tx, 1),
          (tx: WriteScope) => tx.savepoint((sp) => insert(sp, 1)),
        ]) {
          let stray: Promise<unknown> | undefined;
          const error = await failureOf(() =>
            lease.transact(async (tx) => {
              stray = start(tx);
            }),
          );
          expect(error.code).toBe("callback_escaped");
          expect(await codeOf(started(stray))).toBe("callback_escaped");
        }
        expect(await column(lease, "log")).toStrictEqual([]);
        await lease.transact((tx) => insert(tx, 2));
        expect(await column(lease, "log")).toStrictEqual([2]);
        expect(await unhandled.settled(), "unhandled rejections").toStrictEqual([]);
      });
    });
  });
}
