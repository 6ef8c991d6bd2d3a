/**
 * Journal and run family (docs/contracts.md): appends get gap-free sequences across
 * transactions, and an append that is rolled back leaves no gap; an
 * idempotency key returns the first event instead of writing twice; range
 * reads honour after/limit. The run stops in exactly three reason shapes;
 * a reason naming no event is `invalid_stop_reason` at that statement only
 * (the transaction goes on and commits), a malformed one is refused before
 * anything is written, and SQLite itself refuses an incoherent row. `verify`
 * passes a healthy file and reports one tampered with behind its back (a
 * tree, a root, a chunk, the journal, an object id stored twice).
 */

import { createHash } from "node:crypto";
import {
  APPLICATION_ID,
  EMPTY_ROOT_ID,
  type JournalEvent,
  type JournalListOptions,
  type RunLease,
  SCHEMA_V1,
  type StopReason,
  type StopStatus,
} from "@runledger/core";
import { CHUNK_SIZE, WORKSPACE_ENCODING_V1 } from "@runledger/core/engine";
import { describe, expect, it, onTestFinished } from "vitest";
import { FaultInjector } from "../faults.js";
import { type Fixtures, failureOf } from "../fixtures.js";
import { CREATE, firstRow, noise, openRun, raw, runStore } from "./run-fixtures.js";
import {
  encodeNode,
  INLINE_NODE_MAX,
  referenceTextRootId,
  sha256Hex,
} from "./workspace-fixtures.js";

/** A file larger than INLINE_MAX (256 bytes): stored apart, as an object of its own. */
const APART = "a".repeat(257);

/** Ids e1, e2, … and a clock that ticks 1 ms per reading, so both are predictable. */
function predictable() {
  let ids = 0;
  let now = 1_000;
  return { newId: () => `e${++ids}`, clock: () => ++now };
}

/** A new run open through this lease and through another store's handle (its own connection). */
async function twoHandles(fx: Fixtures): Promise<{ lease: RunLease; other: RunLease }> {
  const location = fx.location();
  const lease = await openRun(fx, location);
  const other = await runStore(fx).open(location);
  onTestFinished(() => other.release());
  return { lease, other };
}

/** A new run open through a driver that records its statements, and through another store's handle. */
async function countedHandles(
  fx: Fixtures,
): Promise<{ faults: FaultInjector; lease: RunLease; other: RunLease }> {
  const faults = new FaultInjector(fx.driver());
  const location = fx.location();
  const lease = await openRun(fx, location, { driver: faults.driver });
  const other = await runStore(fx).open(location);
  onTestFinished(() => other.release());
  return { faults, lease, other };
}

/** The journal INSERTs among some recorded statements. */
function journalInserts(statements: readonly string[]): string[] {
  return statements.filter((sql) => /INSERT INTO journal/.test(sql));
}

async function journal(lease: RunLease): Promise<JournalEvent[]> {
  return lease.read((r) => r.journal.list({ limit: 10_000 }));
}

export function describeRunJournal(fx: Fixtures): void {
  describe("run journal", () => {
    it("numbers events 1, 2, 3… without gaps across transactions, each with a unique id", async () => {
      const lease = await openRun(fx, fx.location(), predictable());
      const first = await lease.transact(async (tx) => [
        await tx.journal.append({ n: 1 }),
        await tx.journal.append({ n: 2 }),
        await tx.journal.append({ n: 3 }),
      ]);
      const second = await lease.transact(async (tx) => [
        await tx.journal.append({ n: 4 }),
        await tx.journal.append({ n: 5, nested: { list: [1, "two", null, true] } }),
      ]);
      const appended = [...first, ...second];
      expect(appended.map((a) => a.sequence)).toEqual([1, 2, 3, 4, 5]);
      expect(appended.map((a) => a.eventId)).toEqual(["e1", "e2", "e3", "e4", "e5"]);
      expect(new Set(appended.map((a) => a.rootId))).toEqual(new Set([EMPTY_ROOT_ID]));

      const events = await journal(lease);
      expect(events.map((e) => [e.sequence, e.eventId, e.key, e.rootId])).toEqual(
        appended.map((a) => [a.sequence, a.eventId, null, EMPTY_ROOT_ID]),
      );
      expect(events[4]?.record).toEqual({ n: 5, nested: { list: [1, "two", null, true] } });
      const times = events.map((e) => e.writtenAt);
      expect(times).toEqual([...times].sort((a, b) => a - b));
    });

    // Core tells a stale sequence guess by SQLITE_CONSTRAINT_TRIGGER.
    fx.needs("extendedErrorCodes").it(
      "leaves no gap where an append was rolled back, whole or by savepoint",
      async () => {
        const lease = await openRun(fx, fx.location());
        await lease.transact((tx) => tx.journal.append({ n: 1 }));
        const boom = new Error("the caller changed its mind");
        await expect(
          lease.transact(async (tx) => {
            await tx.journal.append({ n: "rolled back" });
            throw boom;
          }),
        ).rejects.toBe(boom);
        const sequences = await lease.transact(async (tx) => {
          const kept = await tx.journal.append({ n: 2 });
          await expect(
            tx.savepoint(async (sp) => {
              await sp.journal.append({ n: "undone by savepoint" });
              throw boom;
            }),
          ).rejects.toBe(boom);
          const next = await tx.journal.append({ n: 3 });
          return [kept.sequence, next.sequence];
        });
        expect(sequences).toEqual([2, 3]);
        expect((await journal(lease)).map((e) => [e.sequence, e.record.n])).toEqual([
          [1, 1],
          [2, 2],
          [3, 3],
        ]);
      },
    );

    fx.needs("walSharedMemory").it(
      "records the root current at each append, after another handle moved it and after rolled-back applies",
      async () => {
        const { lease, other } = await twoHandles(fx);
        const appendRoot = () =>
          lease.transact(async (tx) => (await tx.journal.append({ n: "probe" })).rootId);
        expect(await appendRoot()).toBe(EMPTY_ROOT_ID);
        // Another handle (its own connection) publishes a root.
        const moved = await other.transact((tx) =>
          tx.workspace.apply({ put: { "a.txt": "from the other handle" } }),
        );
        expect(await appendRoot()).toBe(moved.rootId);
        // An apply whose transaction rolls back, and one undone by its savepoint.
        const boom = new Error("changed its mind");
        await expect(
          lease.transact(async (tx) => {
            await tx.workspace.apply({ put: { "b.txt": "rolled back" } });
            throw boom;
          }),
        ).rejects.toBe(boom);
        expect(await appendRoot()).toBe(moved.rootId);
        const inside = await lease.transact(async (tx) => {
          await expect(
            tx.savepoint(async (sp) => {
              await sp.workspace.apply({ put: { "c.txt": "undone" } });
              throw boom;
            }),
          ).rejects.toBe(boom);
          return (await tx.journal.append({ n: "after the savepoint" })).rootId;
        });
        expect(inside).toBe(moved.rootId);
        const applied = await lease.transact((tx) =>
          tx.workspace.apply({ put: { "d.txt": "kept" } }),
        );
        expect(await appendRoot()).toBe(applied.rootId);
        // What each append returned is what the journal holds, and the pointer agrees.
        const events = await journal(lease);
        expect(events.map((e) => e.rootId)).toEqual([
          EMPTY_ROOT_ID,
          moved.rootId,
          moved.rootId,
          moved.rootId,
          moved.rootId,
          applied.rootId,
          applied.rootId,
        ]);
        expect(await lease.read((r) => r.workspace.currentRoot())).toBe(applied.rootId);
        // Gap-free throughout: every stale guess was refused, never written.
        expect(events.map((e) => e.sequence)).toEqual([1, 2, 3, 4, 5, 6, 7]);
      },
    );

    fx.needs("walSharedMemory").it(
      "a step built on a root another handle replaced is refused unwritten and built again on the newest root",
      async () => {
        const { faults, lease, other } = await countedHandles(fx);
        // Small files in a small directory: each apply's only write is its event.
        const put = (on: RunLease, path: string, text: string) =>
          on.transact((tx) => tx.workspace.apply({ put: { [path]: text } }));
        await put(lease, "state/mine.json", "1");
        await put(other, "state/theirs.json", "2");
        // This lease last saw its own root at event 1: that guess is stale.
        const mark = faults.statements.length;
        expect(await put(lease, "state/mine.json", "3")).toMatchObject({ sequence: 3 });
        // Refused once, then written once on the newest root read: never tried twice on the guess.
        expect(journalInserts(faults.statements.slice(mark))).toHaveLength(2);
        // Another event at the same root: the sequence moved, the root did not.
        await other.transact((tx) => tx.journal.append({ n: "same root" }));
        const last = await put(lease, "state/mine.json", "5");
        expect(last).toMatchObject({
          sequence: 5,
          rootId: referenceTextRootId({ "state/mine.json": "5", "state/theirs.json": "2" }),
        });
        const events = await journal(lease);
        expect(events.map((e) => e.sequence)).toEqual([1, 2, 3, 4, 5]);
        expect(await lease.read((r) => r.workspace.currentRoot())).toBe(last.rootId);
        expect((await lease.verify()).problems).toStrictEqual([]);
      },
    );

    fx.needs("walSharedMemory").it(
      "a lease's first step builds on the newest event, read under the write lock after another handle wrote: one journal INSERT, never a stale one",
      async () => {
        const { faults, lease, other } = await countedHandles(fx);
        // Written by the other handle after this lease was opened, before its first write.
        await other.transact((tx) => tx.workspace.apply({ put: { "state/theirs.json": "1" } }));
        await other.transact((tx) => tx.journal.append({ n: "same root" }));
        const mark = faults.statements.length;
        const first = await lease.transact((tx) =>
          tx.workspace.apply({ put: { "state/mine.json": "2" } }),
        );
        expect(first).toMatchObject({
          sequence: 3,
          rootId: referenceTextRootId({ "state/mine.json": "2", "state/theirs.json": "1" }),
        });
        expect(journalInserts(faults.statements.slice(mark))).toHaveLength(1);
        expect((await lease.verify()).problems).toStrictEqual([]);
      },
    );

    fx.needs("callsNow")
      .because("a driver whose calls settle later reads the newest event inside the apply")
      .it(
        "a run's first step goes the way of its later ones: the newest event and the anchor read once, no object read, no savepoint",
        async () => {
          const faults = new FaultInjector(fx.driver());
          const lease = await openRun(fx, fx.location(), { driver: faults.driver });
          const step = async (n: number) => {
            const mark = faults.statements.length;
            await lease.transact((tx) =>
              tx.workspace.apply({ put: { "state/output.json": `{"n":${n}}` } }),
            );
            return faults.statements.slice(mark);
          };
          const first = await step(1);
          expect(
            first.filter((sql) => /FROM journal ORDER BY sequence DESC/.test(sql)),
          ).toHaveLength(1);
          expect(first.filter((sql) => /FROM journal_anchor/.test(sql))).toHaveLength(1);
          expect(first.filter((sql) => /workspace_object|SAVEPOINT/.test(sql))).toStrictEqual([]);
          expect(journalInserts(first)).toHaveLength(1);
          // The next step reads nothing: the lease's guess is the event its first step wrote.
          const second = await step(2);
          expect(second.filter((sql) => /^\s*SELECT/i.test(sql))).toStrictEqual([]);
          expect(journalInserts(second)).toHaveLength(1);
          expect((await lease.verify()).problems).toStrictEqual([]);
        },
      );

    fx.needs("walSharedMemory").it(
      "records the other handle's root when its apply lands right after this lease's rolled-back work",
      async () => {
        const { lease, other } = await twoHandles(fx);
        expect((await lease.transact((tx) => tx.journal.append({ n: "first" }))).sequence).toBe(1);
        const boom = new Error("changed its mind");
        // A rolled-back append: the journal is back at 1, as this lease last saw it plus one.
        await expect(
          lease.transact(async (tx) => {
            await tx.journal.append({ n: "rolled back" });
            throw boom;
          }),
        ).rejects.toBe(boom);
        // The other handle moves the pointer with sequence 2: the sequence this lease
        // would guess next is free again, but the root is no longer the one it saw.
        const theirs = await other.transact((tx) =>
          tx.workspace.apply({ put: { "a.txt": "theirs" } }),
        );
        expect(theirs.sequence).toBe(2);
        const mine = await lease.transact((tx) => tx.journal.append({ n: "mine" }));
        expect(mine).toMatchObject({ sequence: 3, rootId: theirs.rootId });
        // The same after a savepoint undid an apply inside a committed transaction.
        await lease.transact(async (tx) => {
          await expect(
            tx.savepoint(async (sp) => {
              await sp.workspace.apply({ put: { "b.txt": "undone" } });
              throw boom;
            }),
          ).rejects.toBe(boom);
        });
        const again = await other.transact((tx) =>
          tx.workspace.apply({ put: { "c.txt": "theirs again" } }),
        );
        expect(again.sequence).toBe(4);
        const last = await lease.transact((tx) => tx.journal.append({ n: "mine again" }));
        expect(last).toMatchObject({ sequence: 5, rootId: again.rootId });
        const events = await journal(lease);
        expect(events.map((e) => [e.sequence, e.rootId])).toEqual([
          [1, EMPTY_ROOT_ID],
          [2, theirs.rootId],
          [3, theirs.rootId],
          [4, again.rootId],
          [5, again.rootId],
        ]);
      },
    );

    fx.needs("walSharedMemory").it(
      "takes the next sequence after another handle's appends, and after its own rolled-back append",
      async () => {
        const { lease, other } = await twoHandles(fx);
        const append = (on: typeof lease, n: string) =>
          on.transact(async (tx) => (await tx.journal.append({ n })).sequence);
        expect(await append(lease, "mine")).toBe(1);
        expect(await append(other, "theirs")).toBe(2);
        expect(await append(other, "theirs again")).toBe(3);
        expect(await append(lease, "mine after theirs")).toBe(4);
        const boom = new Error("changed its mind");
        await expect(
          lease.transact(async (tx) => {
            expect((await tx.journal.append({ n: "rolled back" })).sequence).toBe(5);
            throw boom;
          }),
        ).rejects.toBe(boom);
        expect(await append(lease, "after the rollback")).toBe(5);
        expect(await append(other, "theirs last")).toBe(6);
        const events = await journal(lease);
        expect(events.map((e) => [e.sequence, e.record.n])).toEqual([
          [1, "mine"],
          [2, "theirs"],
          [3, "theirs again"],
          [4, "mine after theirs"],
          [5, "after the rollback"],
          [6, "theirs last"],
        ]);
      },
    );

    it("returns the first event for a repeated idempotency key and refuses a different record", async () => {
      const lease = await openRun(fx, fx.location(), predictable());
      const first = await lease.transact((tx) =>
        tx.journal.append({ step: "charge", amount: 10 }, { key: "charge-1" }),
      );
      const again = await lease.transact((tx) =>
        tx.journal.append({ step: "charge", amount: 10 }, { key: "charge-1" }),
      );
      expect(again).toEqual(first);

      const outcome = await lease.transact(async (tx) => {
        const error = await failureOf(() =>
          tx.journal.append({ step: "charge", amount: 99 }, { key: "charge-1" }),
        );
        // Refused before any write: the transaction carries on.
        const next = await tx.journal.append({ step: "after" }, { key: "after-1" });
        return { error, next };
      });
      expect(outcome.error.code).toBe("idempotency_conflict");
      expect(outcome.error.details?.sequence).toBe(1);
      expect(outcome.next.sequence).toBe(2);

      const events = await journal(lease);
      expect(events.map((e) => [e.sequence, e.key, e.record])).toEqual([
        [1, "charge-1", { step: "charge", amount: 10 }],
        [2, "after-1", { step: "after" }],
      ]);
    });

    it("a repeated key inside one transaction returns the event written earlier in it, and a repeat after the run stopped returns the landed event", async () => {
      const lease = await openRun(fx, fx.location(), predictable());
      const [first, again, other] = await lease.transact(async (tx) => {
        const a = await tx.journal.append({ n: 1 }, { key: "k/1" });
        const b = await tx.journal.append({ n: 1 }, { key: "k/1" });
        const c = await tx.journal.append({ n: 2 }, { key: "k/2" });
        return [a, b, c];
      });
      expect(again).toEqual(first);
      expect(other.sequence).toBe(2);
      await lease.transact((tx) => tx.run.stop({ status: "completed" }));
      // A retry of work that landed gets its event; new work is refused by the stopped run.
      expect(await lease.transact((tx) => tx.journal.append({ n: 2 }, { key: "k/2" }))).toEqual(
        other,
      );
      const late = await failureOf(() =>
        lease.transact((tx) => tx.journal.append({ n: 3 }, { key: "k/3" })),
      );
      expect(late.code).toBe("run_finished");
      const changed = await failureOf(() =>
        lease.transact((tx) => tx.journal.append({ n: 9 }, { key: "k/1" })),
      );
      expect(changed.code).toBe("idempotency_conflict");
      expect((await journal(lease)).map((e) => e.key)).toEqual(["k/1", "k/2"]);
    });

    it("lists events after a sequence, at most limit of them, in order", async () => {
      const lease = await openRun(fx, fx.location());
      await lease.transact(async (tx) => {
        for (let n = 1; n <= 10; n++) await tx.journal.append({ n });
      });
      const page = (options: { after?: number; limit?: number }) =>
        lease.read(async (r) => (await r.journal.list(options)).map((e) => e.sequence));
      expect(await page({})).toEqual([1, 2, 3, 4, 5, 6, 7, 8, 9, 10]);
      expect(await page({ after: 3, limit: 4 })).toEqual([4, 5, 6, 7]);
      expect(await page({ after: 8 })).toEqual([9, 10]);
      expect(await page({ after: 10 })).toEqual([]);
      expect(await page({ after: 0, limit: 1 })).toEqual([1]);
      for (const bad of [{ after: -1 }, { limit: 1.5 }, { after: Number.NaN }, { limit: 0 }]) {
        const error = await failureOf(() => page(bad));
        expect(error.code).toBe("invalid_argument");
      }
    });

    it("lists newest first with order desc, between after and before, with keyset cursors both ways", async () => {
      const lease = await openRun(fx, fx.location());
      await lease.transact(async (tx) => {
        for (let n = 1; n <= 10; n++) await tx.journal.append({ n });
      });
      const page = (options: JournalListOptions) =>
        lease.read(async (r) => (await r.journal.list(options)).map((e) => e.sequence));
      expect(await page({ order: "desc" })).toEqual([10, 9, 8, 7, 6, 5, 4, 3, 2, 1]);
      expect(await page({ order: "desc", limit: 3 })).toEqual([10, 9, 8]);
      expect(await page({ order: "desc", before: 8, limit: 3 })).toEqual([7, 6, 5]);
      expect(await page({ before: 4 })).toEqual([1, 2, 3]);
      expect(await page({ after: 2, before: 6, order: "desc" })).toEqual([5, 4, 3]);
      expect(await page({ after: 5, before: 6 })).toEqual([]);
      // Paging down by the last sequence seen visits every event once.
      const seen: number[] = [];
      let before: number | undefined;
      for (;;) {
        const next = await page({ order: "desc", limit: 4, ...(before ? { before } : {}) });
        if (next.length === 0) break;
        seen.push(...next);
        before = next[next.length - 1];
      }
      expect(seen).toEqual([10, 9, 8, 7, 6, 5, 4, 3, 2, 1]);
      const streamed = await lease.read(async (r) => {
        const out: number[] = [];
        for await (const e of r.journal.stream({ order: "desc", before: 9, pageSize: 3 })) {
          out.push(e.sequence);
        }
        return out;
      });
      expect(streamed).toEqual([8, 7, 6, 5, 4, 3, 2, 1]);
      for (const bad of [
        { before: 0 },
        { before: 2.5 },
        { order: "down" },
        { keyPrefix: 7 },
        { keyPrefix: "\ud800" },
        { oder: "desc" },
      ]) {
        const error = await failureOf(() => page(bad as JournalListOptions));
        expect(error.code).toBe("invalid_argument");
      }
      const unknown = await failureOf(() =>
        lease.read((r) => r.journal.stream({ limit: 3 } as never).next()),
      );
      expect(unknown.code).toBe("invalid_argument");
      expect(unknown.message).toContain('"limit"');
    });

    it("gets an event by its idempotency key in one lookup, or undefined", async () => {
      const lease = await openRun(fx, fx.location());
      const written = await lease.transact(async (tx) => {
        await tx.journal.append({ n: 1 }, { key: "step:1" });
        await tx.journal.append({ n: 2 });
        return tx.journal.append({ n: 3 }, { key: "step:3" });
      });
      const found = await lease.read((r) => r.journal.get("step:3"));
      expect(found?.sequence).toBe(written.sequence);
      expect(found?.record).toEqual({ n: 3 });
      expect(found?.key).toBe("step:3");
      expect(found?.eventId).toBe(written.eventId);
      expect(await lease.read((r) => r.journal.get("step:2"))).toBeUndefined();
      for (const bad of ["", "k".repeat(513), "\udc00", 3]) {
        const error = await failureOf(() => lease.read((r) => r.journal.get(bad as string)));
        expect(error.code).toBe("invalid_argument");
      }
    });

    it("lists the events whose key starts with a prefix, exactly for any Unicode key, in either order", async () => {
      const lease = await openRun(fx, fx.location());
      // Keys around the prefix's successor: U+FFFF and an astral character sort above "\uffff".
      const keys = [
        "a",
        "a/",
        "a/1",
        "a/\uffff",
        "a/\u{1f600}",
        "a/\u{10ffff}",
        "a0",
        "b",
        "a\u{10ffff}",
        "\u{10ffff}",
        "\u{10ffff}x",
      ];
      await lease.transact(async (tx) => {
        for (const [n, key] of keys.entries()) await tx.journal.append({ n }, { key });
        await tx.journal.append({ unkeyed: true });
      });
      const keysOf = (options: JournalListOptions) =>
        lease.read(async (r) => (await r.journal.list(options)).map((e) => e.key));
      for (const prefix of ["a/", "a", "\u{10ffff}", "a/\u{1f600}", "", "zz"]) {
        const expected = keys.filter((key) => key.startsWith(prefix));
        expect(await keysOf({ keyPrefix: prefix })).toEqual(expected);
        expect(await keysOf({ keyPrefix: prefix, order: "desc" })).toEqual([...expected].reverse());
      }
      expect(await keysOf({ keyPrefix: "a/", order: "desc", limit: 2 })).toEqual([
        "a/\u{10ffff}",
        "a/\u{1f600}",
      ]);
      expect(await keysOf({ keyPrefix: "a/", after: 2, before: 5 })).toEqual(["a/1", "a/\uffff"]);
    });

    it("lists by key prefix the same whether the prefix is rare or common: around 64 matches, far from the cursor and near it", async () => {
      const lease = await openRun(fx, fx.location());
      // 200 "c/" events, then 65 "w/" events spread among 400 unkeyed ones, then 3 "r/" events at the end.
      await lease.transact(async (tx) => {
        for (let i = 0; i < 200; i++) await tx.journal.append({ i }, { key: `c/${i}` });
        for (let i = 0; i < 400; i++) {
          await tx.journal.append({ i }, i % 6 === 0 && i / 6 < 65 ? { key: `w/${i / 6}` } : {});
        }
        for (let i = 0; i < 3; i++) await tx.journal.append({ i }, { key: `r/${i}` });
      });
      const events = await lease.read((r) => r.journal.list({ limit: 10_000 }));
      const keysOf = (options: JournalListOptions) =>
        lease.read(async (r) => (await r.journal.list(options)).map((e) => e.key));
      const streamed = (options: JournalListOptions & { pageSize?: number }) =>
        lease.read(async (r) => {
          const out: (string | null)[] = [];
          for await (const event of r.journal.stream(options)) out.push(event.key);
          return out;
        });
      for (const prefix of ["c/", "w/", "w/6", "r/", "w/1"]) {
        const all = events.filter((e) => e.key?.startsWith(prefix));
        const expected = all.map((e) => e.key);
        expect(await keysOf({ keyPrefix: prefix, limit: 10_000 })).toEqual(expected);
        expect(await keysOf({ keyPrefix: prefix, order: "desc", limit: 3 })).toEqual(
          [...expected].reverse().slice(0, 3),
        );
        expect(await streamed({ keyPrefix: prefix, pageSize: 7 })).toEqual(expected);
        expect(await streamed({ keyPrefix: prefix, order: "desc", pageSize: 7 })).toEqual(
          [...expected].reverse(),
        );
        const middle = all[Math.floor(all.length / 2)]!.sequence;
        expect(await keysOf({ keyPrefix: prefix, after: middle, limit: 10_000 })).toEqual(
          all.filter((e) => e.sequence > middle).map((e) => e.key),
        );
        expect(
          await keysOf({ keyPrefix: prefix, before: middle, order: "desc", limit: 2 }),
        ).toEqual(
          all
            .filter((e) => e.sequence < middle)
            .reverse()
            .slice(0, 2)
            .map((e) => e.key),
        );
      }
    });

    it("an apply's key names its event, found by get; an apply whose key names an event already is idempotency_conflict, nothing written", async () => {
      const lease = await openRun(fx, fx.location());
      const first = await lease.transact((tx) =>
        tx.workspace.apply({ put: { "a.txt": "a" } }, { event: { step: 1 }, key: "root:1" }),
      );
      const found = await lease.read((r) => r.journal.get("root:1"));
      expect([found?.sequence, found?.record, found?.rootId]).toStrictEqual([
        first.sequence,
        { step: 1 },
        first.rootId,
      ]);
      const again = await failureOf(() =>
        lease.transact((tx) =>
          tx.workspace.apply({ put: { "b.txt": "b" } }, { event: { step: 2 }, key: "root:1" }),
        ),
      );
      expect(again.code).toBe("idempotency_conflict");
      // Inside a transaction the refusal undoes only the apply: the transaction goes on.
      await lease.transact(async (tx) => {
        const refused = await failureOf(() =>
          tx.workspace.apply({ put: { "c.txt": "c" } }, { key: "root:1" }),
        );
        expect(refused.code).toBe("idempotency_conflict");
        await tx.journal.append({ after: true });
      });
      const events = await lease.read((r) => r.journal.list());
      expect(events.map((event) => event.record)).toStrictEqual([{ step: 1 }, { after: true }]);
      expect(await lease.read((r) => r.workspace.list())).toHaveLength(1);
      for (const key of ["", 5]) {
        const bad = await failureOf(() =>
          lease.transact((tx) =>
            tx.workspace.apply({ put: { "d.txt": "d" } }, { key: key as never }),
          ),
        );
        expect(bad.code).toBe("invalid_argument");
      }
    });

    it("lands 200 transact calls started together on one lease, in call order", async () => {
      const lease = await openRun(fx, fx.location());
      const results = await Promise.all(
        Array.from({ length: 200 }, (_, n) =>
          lease.transact(async (tx) => (await tx.journal.append({ n })).sequence),
        ),
      );
      expect(results).toEqual(Array.from({ length: 200 }, (_, n) => n + 1));
      const events = await journal(lease);
      expect(events.map((event) => event.record.n)).toEqual(
        results.map((sequence) => sequence - 1),
      );
    });
  });

  describe("run stop reasons", () => {
    const stopAndRead = async (
      lease: RunLease,
      stop: { status: StopStatus; reason?: StopReason },
    ) => {
      await lease.transact((tx) => tx.run.stop(stop));
      return lease.read((r) => r.run.get());
    };

    fx.needs("walSharedMemory").it(
      "stores each of the three reason shapes: none, host + code, journal event",
      async () => {
        const location = fx.location();
        const lease = await openRun(fx, location);
        const { sequence } = await lease.transact((tx) => tx.journal.append({ failed: "step 3" }));

        // In an order the run lifecycle allows: a paused run resumes, or ends.
        const host = await stopAndRead(lease, {
          status: "interrupted",
          reason: { host: "worker-7", code: "SIGTERM" },
        });
        expect([host.status, host.stopReason]).toEqual([
          "interrupted",
          { host: "worker-7", code: "SIGTERM" },
        ]);
        await lease.transact((tx) => tx.run.resume());
        const none = await stopAndRead(lease, { status: "suspended" });
        expect([none.status, none.stopReason]).toEqual(["suspended", null]);
        const event = await stopAndRead(lease, { status: "failed", reason: { event: sequence } });
        expect([event.status, event.stopReason]).toEqual(["failed", { event: sequence }]);

        // Stored as found in the columns, one shape at a time.
        const row = await firstRow(
          fx,
          location,
          "SELECT status, stop_host, stop_code, stop_event FROM run",
        );
        expect(row).toEqual({ status: "failed", stop_host: null, stop_code: null, stop_event: 1 });
      },
    );

    it("refuses a reason naming no event as invalid_stop_reason; the transaction goes on and commits", async () => {
      const lease = await openRun(fx, fx.location());
      const result = await lease.transact(async (tx) => {
        const before = await tx.journal.append({ n: 1 });
        const error = await failureOf(() =>
          tx.run.stop({ status: "failed", reason: { event: 42 } }),
        );
        const after = await tx.journal.append({ n: 2 });
        const stopped = await tx.run.stop({
          status: "suspended",
          reason: { event: after.sequence },
        });
        return { error, before, after, stopped };
      });
      expect(result.error.code).toBe("invalid_stop_reason");
      expect(result.error.message).toMatch(/42/);
      expect([result.before.sequence, result.after.sequence]).toEqual([1, 2]);
      const run = await lease.read((r) => r.run.get());
      expect([run.status, run.stopReason]).toEqual(["suspended", { event: 2 }]);
      expect((await journal(lease)).length).toBe(2);
    });

    it("refuses a malformed reason as invalid_stop_reason with nothing written", async () => {
      const lease = await openRun(fx, fx.location(), predictable());
      await lease.transact((tx) => tx.journal.append({ n: 1 }));
      const before = await lease.read((r) => r.run.get());
      const malformed: unknown[] = [
        { host: "worker-7" },
        { code: "SIGTERM" },
        { host: "worker-7", code: "SIGTERM", event: 1 },
        { host: "", code: "SIGTERM" },
        { host: "worker-7", code: 9 },
        { event: 0 },
        { event: 1.5 },
        { event: "1" },
        { event: 1, extra: true },
        {},
      ];
      for (const reason of malformed) {
        const error = await failureOf(() =>
          lease.transact((tx) => tx.run.stop({ status: "failed", reason: reason as StopReason })),
        );
        expect(error.code, JSON.stringify(reason)).toBe("invalid_stop_reason");
      }
      expect(await lease.read((r) => r.run.get())).toEqual(before);
      expect((await journal(lease)).length).toBe(1);
    });

    it("never lets a running run carry a reason, through the API or beneath it", async () => {
      const location = fx.location();
      const lease = await openRun(fx, location);
      const error = await failureOf(() =>
        lease.transact((tx) =>
          tx.run.stop({ status: "running" as StopStatus, reason: { host: "h", code: "c" } }),
        ),
      );
      expect(error.code).toBe("invalid_argument");
      await lease.transact((tx) => tx.journal.append({ n: 1 }));
      await lease.release();

      // SQLite's own CHECKs and foreign key hold the shapes even for a raw writer.
      const refusals: [string, string][] = [
        ["UPDATE run SET stop_host = 'h', stop_code = 'c'", "constraint_check"],
        ["UPDATE run SET stop_event = 1", "constraint_check"],
        ["UPDATE run SET status = 'failed', stop_host = 'h'", "constraint_check"],
        [
          "UPDATE run SET status = 'failed', stop_host = 'h', stop_code = 'c', stop_event = 1",
          "constraint_check",
        ],
        ["UPDATE run SET status = 'failed', stop_event = 99", "constraint_foreign_key"],
        ["UPDATE run SET status = 'paused'", "constraint_check"],
        [
          "INSERT INTO run (singleton, workflow_id, run_id, status, created_at, updated_at) VALUES (2, 'w', 'r', 'running', 0, 0)",
          "constraint_check",
        ],
      ];
      for (const [sql, code] of refusals) {
        const refused = await failureOf(() => raw(fx, location, [sql]));
        expect(refused.code, sql).toBe(code);
      }
      const reopened = await runStore(fx).open(location);
      const run = await reopened.read((r) => r.run.get());
      expect([run.status, run.stopReason]).toEqual(["running", null]);
      await reopened.release();
    });
  });

  describe("run verify", () => {
    it("passes a healthy run", async () => {
      const lease = await openRun(fx, fx.location());
      await lease.transact(async (tx) => {
        for (let n = 1; n <= 5; n++) await tx.journal.append({ n });
      });
      const report = await lease.verify();
      expect(report).toMatchObject({ ok: true, problems: [] });
      expect(report.counts).toMatchObject({ events: 5, objects: 1, roots: 1 });
    });

    it("reports its progress in bytes, moving inside a large file, then in roots", async () => {
      const lease = await openRun(fx, fx.location());
      const large = new Uint8Array(CHUNK_SIZE * 6 + 17).map((_, i) => (i * 31) % 251);
      await lease.transact((tx) =>
        tx.workspace.apply({ put: { "big.bin": large, "small.txt": "s".repeat(400) } }),
      );
      const calls: [string, number, number][] = [];
      const report = await lease.verify({
        progress: (step, done, total) => calls.push([step, done, total]),
      });
      expect(report.ok).toBe(true);
      const bytes = calls.filter(([step]) => step === "bytes");
      const total = bytes[0]![2];
      expect(total).toBeGreaterThanOrEqual(large.length);
      expect(bytes.every(([, , t]) => t === total)).toBe(true);
      for (let i = 1; i < bytes.length; i++)
        expect(bytes[i]![1]).toBeGreaterThanOrEqual(bytes[i - 1]![1]);
      expect(bytes.at(-1)![1]).toBe(total);
      // Inside the large file: a call per piece, strictly between its start and its end.
      const inside = new Set(
        bytes.map(([, done]) => done).filter((done) => done > 0 && done < total),
      );
      expect(inside.size).toBeGreaterThanOrEqual(6);
      const roots = calls.filter(([step]) => step === "roots");
      expect(roots.at(-1)![1]).toBe(roots.at(-1)![2]);
      // The roots come after every byte.
      expect(calls.findIndex(([step]) => step === "roots")).toBeGreaterThan(
        calls.findLastIndex(([step]) => step === "bytes"),
      );
    });

    /** A healthy run with two roots besides the empty one, closed, then changed behind core's back. */
    const tampered = async (statements: (roots: string[]) => string[]) => {
      const location = fx.location();
      const lease = await openRun(fx, location);
      const roots: string[] = [];
      await lease.transact(async (tx) => {
        await tx.journal.append({ n: 1 });
        roots.push((await tx.workspace.apply({ put: { "a.txt": APART } })).rootId);
        roots.push((await tx.workspace.apply({ put: { "b/c.txt": "c" } })).rootId);
        await tx.journal.append({ n: 4 });
      });
      expect((await lease.verify()).problems).toEqual([]);
      await lease.release();
      await raw(fx, location, statements(roots));
      const reopened = await runStore(fx).open(location, { create: CREATE });
      const report = await reopened.verify();
      await reopened.release();
      return report;
    };

    it("reports an object whose bytes do not hash to its id", async () => {
      const report = await tampered(() => [
        "INSERT INTO workspace_object (id, kind, size, data) VALUES (zeroblob(32), 0, 3, X'616263')",
      ]);
      expect(report.ok).toBe(false);
      expect(report.problems.join("\n")).toMatch(/object 0{64}: its bytes do not hash to its id/);
    });

    it("reports a file object whose bytes changed", async () => {
      const digest = createHash("sha256").update(APART).digest("hex");
      const report = await tampered(() => [
        `UPDATE workspace_object SET data = zeroblob(length(data)) WHERE id = X'${digest}'`,
      ]);
      expect(report.problems.join("\n")).toContain(
        `object ${digest}: its bytes do not hash to its id`,
      );
    });

    it("reports a file a retained root names whose object is missing", async () => {
      const digest = createHash("sha256").update(APART).digest("hex");
      const report = await tampered(() => [`DELETE FROM workspace_object WHERE id = X'${digest}'`]);
      expect(report.problems).toEqual([`file ${digest}: missing`]);
    });

    /** A raw event after the newest, at `root` holding `node` (SQL expressions). */
    const rawEvent = (root: string, node: string) =>
      `INSERT INTO journal (sequence, event_id, record, root_id, root_node, written_at, digest)
SELECT max(sequence) + 1, 'raw-' || max(sequence), '{}', ${root}, ${node}, 0, zeroblob(32) FROM journal`;

    it("reports a root the journal retains whose node is missing", async () => {
      const missing = "ab".repeat(32);
      // An event naming a root held nowhere, then the current root again (held as before).
      const report = await tampered((roots) => [
        rawEvent(`X'${missing}'`, "NULL"),
        rawEvent(
          `X'${roots[1]}'`,
          `(SELECT root_node FROM journal WHERE root_id = X'${roots[1]}' LIMIT 1)`,
        ),
      ]);
      expect(report.ok).toBe(false);
      expect(report.problems.join("\n")).toMatch(new RegExp(`node ${missing}: missing`));
    });

    it("reports a root an event holds whose bytes do not hash to its id", async () => {
      // The newest root again, holding the bytes of the one before.
      const report = await tampered((roots) => [
        rawEvent(
          `X'${roots[1]}'`,
          `(SELECT root_node FROM journal WHERE root_id = X'${roots[0]}' LIMIT 1)`,
        ),
      ]);
      expect(report.ok).toBe(false);
      expect(report.problems.join("\n")).toMatch(
        /root [0-9a-f]{64}: held in the journal, its bytes do not hash to its id/,
      );
    });

    /** A pinned leaf of inline files (kind 0x03), encoded by the conformance reference encoder. */
    const pinnedLeaf = (files: [name: string, content: string, digestOf: string][]) => {
      const bytes = encodeNode(
        0,
        files.map(([name, content, digestOf]) => ({
          name,
          kind: "file",
          target: createHash("sha256").update(digestOf).digest("hex"),
          size: Buffer.byteLength(content),
          content: Buffer.from(content),
        })),
      );
      const id = createHash("sha256").update(bytes).digest("hex");
      return {
        id,
        statements: [
          `INSERT INTO workspace_object (id, kind, size, data) VALUES (X'${id}', 0, ${bytes.length}, X'${bytes.toString("hex")}')`,
          `INSERT INTO workspace_pin (name, root_id, created_at) VALUES ('odd', X'${id}', 0)`,
        ],
      };
    };

    it("reports a pinned node whose names are out of order (not canonical)", async () => {
      const leaf = pinnedLeaf([
        ["b", "a", "a"],
        ["a", "a", "a"],
      ]);
      const report = await tampered(() => leaf.statements);
      expect(report.problems).toEqual([`node ${leaf.id}: names out of order`]);
    });

    it("reports an inline file whose content does not hash to the digest its entry records", async () => {
      const leaf = pinnedLeaf([["a", "b", "a"]]);
      const report = await tampered(() => leaf.statements);
      const digest = createHash("sha256").update("a").digest("hex");
      expect(report.problems).toEqual([
        `file ${digest}: its inline content does not hash to its digest`,
      ]);
    });

    /** A pinned top of one directory entry named "d", naming `child` (held in the entry when `held`). */
    const pinnedParent = (child: Buffer, held: boolean, target = sha256Hex(child)) => {
      const bytes = encodeNode(0, [
        { name: "d", kind: "directory", target, size: 0, ...(held ? { content: child } : {}) },
      ]);
      const id = sha256Hex(bytes);
      const row = (rowId: string, data: Buffer) =>
        `INSERT INTO workspace_object (id, kind, size, data) VALUES (X'${rowId}', 0, ${data.length}, X'${data.toString("hex")}')`;
      return {
        statements: [
          ...(held ? [] : [row(sha256Hex(child), child)]),
          row(id, bytes),
          `INSERT INTO workspace_pin (name, root_id, created_at) VALUES ('odd', X'${id}', 0)`,
        ],
      };
    };
    /** A directory of one inline file: far below INLINE_NODE_MAX bytes. */
    const smallDirectory = () =>
      encodeNode(0, [
        { name: "f", kind: "file", target: sha256Hex("f"), size: 1, content: Buffer.from("f") },
      ]);

    it("reports a directory small enough to be held in its entry that is stored apart (not canonical)", async () => {
      const child = smallDirectory();
      const report = await tampered(() => pinnedParent(child, false).statements);
      expect(report.problems).toEqual([
        `node ${sha256Hex(child)}: a directory's top of ${child.length} bytes stored apart (at most ${INLINE_NODE_MAX} is held in its entry; not canonical)`,
      ]);
    });

    it("reports a directory held in its entry whose bytes do not hash to the id the entry names", async () => {
      const child = smallDirectory();
      const wrong = sha256Hex("another node");
      const report = await tampered(() => pinnedParent(child, true, wrong).statements);
      expect(report.problems).toEqual([
        `node ${wrong}: held in its entry, its bytes do not hash to its id`,
      ]);
      // The same entry naming its node's own id is sound.
      expect((await tampered(() => pinnedParent(child, true).statements)).problems).toEqual([]);
    });

    it("reports an object id stored twice (written while the trigger that keeps ids once was absent)", async () => {
      // Built statement by statement from the manifest, as creation does, with two rows of one
      // id inserted before `workspace_object_once` exists: the schema still matches exactly.
      const emptyNode = encodeNode(0, []);
      const emptyId = createHash("sha256").update(emptyNode).digest("hex");
      expect(emptyId).toBe(EMPTY_ROOT_ID);
      const file = Buffer.from(APART);
      const fileId = createHash("sha256").update(file).digest("hex");
      const object = (id: string, bytes: Buffer) =>
        `INSERT INTO workspace_object (id, kind, size, data) VALUES (X'${id}', 0, ${bytes.length}, X'${bytes.toString("hex")}')`;
      const statements = fx.remote ? [] : [`PRAGMA application_id = ${APPLICATION_ID}`];
      for (const entry of SCHEMA_V1.objects) {
        if (entry.sql === null) continue;
        if (entry.name === "workspace_object_once") {
          statements.push(object(emptyId, emptyNode), object(fileId, file), object(fileId, file));
        }
        statements.push(entry.sql);
      }
      statements.push(
        `INSERT INTO runledger_identity (application_id, format, version, encoding) VALUES (${APPLICATION_ID}, 'runledger run database', 1, '${WORKSPACE_ENCODING_V1}')`,
        `INSERT INTO run (singleton, workflow_id, run_id, status, created_at, updated_at) VALUES (1, '${CREATE.workflowId}', '${CREATE.runId}', 'running', 0, 0)`,
        "PRAGMA user_version = 1",
      );
      const location = fx.location();
      await raw(fx, location, statements, { create: true });

      const lease = await runStore(fx).open(location, { create: CREATE });
      const report = await lease.verify();
      await lease.release();
      expect(report.ok).toBe(false);
      expect(report.problems).toEqual([`object ${fileId}: stored 2 times (an id is stored once)`]);
    });

    it("reports an event id used twice (the schema keeps no index on event ids; an injected newId must not repeat one)", async () => {
      const location = fx.location();
      const ids = ["e1", "e2", "e2", "e3"];
      const lease = await openRun(fx, location, { newId: () => ids.shift() ?? "e-more" });
      const appended = await lease.transact(async (tx) => [
        await tx.journal.append({ n: 1 }),
        await tx.journal.append({ n: 2 }),
        await tx.journal.append({ n: 3 }),
      ]);
      expect(appended.map((a) => a.eventId)).toEqual(["e1", "e2", "e2"]);
      const report = await lease.verify();
      expect(report.ok).toBe(false);
      expect(report.problems).toEqual([
        "journal: event id e2 is used by 2 events (an event id is unique)",
      ]);
      // Unique ids from here on: the repeat stays the only problem.
      await lease.transact((tx) => tx.journal.append({ n: 4 }));
      expect((await lease.verify()).problems).toHaveLength(1);
      await lease.release();
    });

    it("reports a piece of a large file whose bytes changed", async () => {
      const location = fx.location();
      const lease = await openRun(fx, location);
      await lease.transact((tx) =>
        tx.workspace.apply({ put: { "data.bin": noise("verify", CHUNK_SIZE + 100) } }),
      );
      const healthy = await lease.verify();
      expect(healthy).toMatchObject({ ok: true, problems: [] });
      expect(healthy.counts.chunks).toBe(2);
      await lease.release();
      // Same length, other bytes: only re-hashing can tell.
      await raw(fx, location, ["UPDATE workspace_chunk SET data = zeroblob(length(data))"]);
      const reopened = await runStore(fx).open(location, { create: CREATE });
      const report = await reopened.verify();
      await reopened.release();
      expect(report.ok).toBe(false);
      expect(report.problems.join("\n")).toMatch(
        /file [0-9a-f]{64}: piece 0 is not at the address its bytes give/,
      );
    });

    it("reports a journal with a gap", async () => {
      const report = await tampered(() => ["DELETE FROM journal WHERE sequence = 2"]);
      expect(report.ok).toBe(false);
      expect(report.problems.join("\n")).toMatch(/journal: .*gaps/);
    });
  });
}
