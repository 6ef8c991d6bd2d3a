/**
 * Transaction family (docs/contracts.md): `lease.transact` commits all or nothing,
 * savepoints nest to any depth and undo exactly their own work, `lease.read`
 * is a snapshot that cannot write, every misuse fails with its own code, and
 * a failed cleanup poisons the entry until the location is opened again.
 */
import { RunledgerError } from "@runledger/core";
import type { Lease, ReadScope, WriteScope } from "@runledger/core/engine";
import { describe, expect, it } from "vitest";
import { FaultInjector } from "../faults.js";
import { codeOf, type Fixtures, failureOf } from "../fixtures.js";
import { unavailable } from "../requirements.js";
import { column, seededLocation, sleep, slowStatements, store } from "./contract-fixtures.js";

const LOG = "CREATE TABLE log (x INTEGER NOT NULL)";
const insert = (scope: WriteScope | ReadScope, x: number) =>
  scope.execute("INSERT INTO log (x) VALUES (?)", [x]);

const DEPTH = 50;

/** Thrown by the level the nesting test fails at. */
class LevelFailure extends Error {
  constructor(readonly level: number) {
    super(`injected failure at level ${level}`);
  }
}

/**
 * Level 0 is the transaction itself; level n + 1 is a savepoint opened inside
 * level n. Each level logs its number, then opens the next; level `failAt`
 * throws right after logging, and the level above it catches exactly that
 * failure and returns normally.
 */
async function nest(
  scope: WriteScope,
  level: number,
  failAt: number | undefined,
  reached: number[],
): Promise<void> {
  await insert(scope, level);
  reached.push(level);
  if (level === failAt) throw new LevelFailure(level);
  if (level === DEPTH) return;
  try {
    await scope.savepoint((inner) => nest(inner, level + 1, failAt, reached));
  } catch (error) {
    if (!(error instanceof LevelFailure) || error.level !== level + 1) throw error;
  }
}

const upTo = (n: number) => Array.from({ length: n }, (_, i) => i);

/** A savepoint that inserts 2 after 20 ms: still running when its caller moves on. */
function slowSavepoint(tx: WriteScope): Promise<void> {
  return tx.savepoint(async (sp) => {
    await sleep(20);
    await insert(sp, 2);
  });
}

/** The work a test deliberately left running inside a callback; the test fails if it never started. */
function started(stray: Promise<unknown> | undefined): Promise<unknown> {
  expect(stray, "the stray work was started").toBeDefined();
  return stray!;
}

/**
 * Runs a callback through `scope` (a transaction or a savepoint) that starts
 * inserting `x` and returns without waiting for it: refused with
 * callback_escaped, and the stray statement rejects with it too.
 */
async function expectEscapedStatement(
  scope: (callback: (tx: WriteScope) => Promise<void>) => Promise<unknown>,
  x: number,
): Promise<void> {
  let stray: Promise<unknown> | undefined;
  const error = await failureOf(() =>
    scope(async (tx) => {
      stray = insert(tx, x);
      stray.catch(() => undefined);
    }),
  );
  expect(error.code).toBe("callback_escaped");
  expect(await codeOf(started(stray))).toBe("callback_escaped");
}

/**
 * After a transaction refused for work it left running: that work rejected
 * with callback_escaped, the entry is ready again, and the lease commits
 * `next` alone into an empty log.
 */
async function expectRecovered(
  entries: () => readonly unknown[],
  lease: Lease,
  stray: Promise<unknown> | undefined,
  next: number,
): Promise<void> {
  expect(await codeOf(started(stray))).toBe("callback_escaped");
  await sleep(20);
  expect(entries()).toStrictEqual([expect.objectContaining({ state: "ready" })]);
  await lease.transact((tx) => insert(tx, next));
  expect(await column(lease, "log")).toStrictEqual([next]);
}

export function describeTransactions(fx: Fixtures): void {
  describe("transaction contract", () => {
    async function logLease(options: Parameters<typeof store>[1] = {}) {
      const s = store(fx, options);
      const location = await seededLocation(fx, LOG);
      return { s, location, lease: await s.open(location) };
    }

    it("commits what the callback wrote and returns its value", async () => {
      const { lease } = await logLease();
      const value = await lease.transact(async (tx) => {
        await insert(tx, 1);
        await insert(tx, 2);
        return "done";
      });
      expect(value).toBe("done");
      expect(await column(lease, "log")).toStrictEqual([1, 2]);
    });

    it("rolls back everything, savepoints included, and rethrows the callback's own error", async () => {
      const { lease } = await logLease();
      await lease.transact((tx) => insert(tx, 0));
      const failure = new Error("the callback failed");
      await expect(
        lease.transact(async (tx) => {
          await insert(tx, 1);
          await tx.savepoint((sp) => insert(sp, 2));
          throw failure;
        }),
      ).rejects.toBe(failure);
      expect(await column(lease, "log")).toStrictEqual([0]);
    });

    it(`nests savepoints to depth ${DEPTH} and commits every level`, async () => {
      const { lease } = await logLease();
      const reached: number[] = [];
      await lease.transact((tx) => nest(tx, 0, undefined, reached));
      expect(reached).toStrictEqual(upTo(DEPTH + 1));
      expect(await column(lease, "log")).toStrictEqual(upTo(DEPTH + 1));
    });

    it(`keeps exactly the levels above a failure at any depth from 1 to ${DEPTH}, and commits them`, async () => {
      const { lease } = await logLease();
      for (let k = 1; k <= DEPTH; k++) {
        const reached: number[] = [];
        await lease.transact(async (tx) => {
          await tx.execute("DELETE FROM log");
          await nest(tx, 0, k, reached);
        });
        expect(reached, `levels run when level ${k} fails`).toStrictEqual(upTo(k + 1));
        expect(await column(lease, "log"), `rows left when level ${k} fails`).toStrictEqual(
          upTo(k),
        );
      }
    });

    it("names savepoints itself: an open savepoint never shares its name, and the names recur by depth", async () => {
      const faults = new FaultInjector(fx.driver());
      const { lease } = await logLease({ driver: faults.driver });
      for (let round = 0; round < 3; round++) {
        await lease.transact(async (tx) => {
          await tx.savepoint((sp) => sp.savepoint((inner) => insert(inner, round)));
          await tx.savepoint((sp) => insert(sp, round)).catch(() => undefined);
        });
      }
      // Replays the savepoint statements: each opens a name no open savepoint has, and
      // RELEASE / ROLLBACK TO name the innermost open one.
      const open: string[] = [];
      const opened: string[] = [];
      for (const sql of faults.statements) {
        const [verb, name] = /^(SAVEPOINT|RELEASE|ROLLBACK TO) (\S+)$/.exec(sql)?.slice(1) ?? [];
        if (verb === undefined || name === undefined) continue;
        expect(name).toMatch(/^[A-Za-z_][A-Za-z0-9_]*$/);
        if (verb === "SAVEPOINT") {
          expect(open, `${name} is already open`).not.toContain(name);
          open.push(name);
          opened.push(name);
        } else {
          expect(open.at(-1), `${verb} names the innermost savepoint`).toBe(name);
          if (verb === "RELEASE") open.pop();
        }
      }
      expect(open).toStrictEqual([]);
      expect(opened).toHaveLength(9);
      // Two depths, two names: the statements stay prepared however many savepoints run.
      expect(new Set(opened).size).toBe(2);
    });

    fx.needs("walSharedMemory").it(
      "gives read a consistent snapshot while another connection commits",
      async () => {
        const { location, lease } = await logLease();
        await lease.transact((tx) => insert(tx, 1));
        // A second store is a second entry, so a second connection to the same file.
        const writer = await store(fx).open(location);
        const counts = await lease.read(async (reader) => {
          const count = async () =>
            (await reader.execute("SELECT count(*) AS n FROM log")).rows[0]?.n;
          const before = await count();
          await writer.transact((tx) => insert(tx, 2));
          return [before, await count()];
        });
        expect(counts, "the snapshot does not move").toStrictEqual([1, 1]);
        expect(await column(lease, "log")).toStrictEqual([1, 2]);
      },
    );

    describe("misuse", () => {
      it("fails with transaction_closed when a tx, a savepoint scope or a reader is used after its callback", async () => {
        const { lease } = await logLease();
        let keptTx: WriteScope | undefined;
        let keptSavepoint: WriteScope | undefined;
        let keptReader: ReadScope | undefined;
        await lease.transact(async (tx) => {
          keptTx = tx;
          await tx.savepoint(async (sp) => {
            keptSavepoint = sp;
          });
          // The savepoint's scope is dead already while the transaction goes on.
          const early = await failureOf(() => insert(keptSavepoint!, 9));
          expect(early.code).toBe("transaction_closed");
          await insert(tx, 1);
        });
        await lease.read(async (reader) => {
          keptReader = reader;
        });
        const attempts: Record<string, () => Promise<unknown>> = {
          "tx.execute": () => insert(keptTx!, 2),
          "tx.savepoint": () => keptTx!.savepoint((sp) => insert(sp, 3)),
          "savepoint scope execute": () => insert(keptSavepoint!, 4),
          "reader.execute": () => keptReader!.execute("SELECT 1 AS one"),
        };
        for (const [what, attempt] of Object.entries(attempts)) {
          const error = await failureOf(attempt);
          expect(error.code, what).toBe("transaction_closed");
          expect(error.message).toMatch(/callback/);
        }
        expect(await column(lease, "log")).toStrictEqual([1]);
      });

      it("fails with savepoint_overlap when two savepoints are opened side by side on one scope", async () => {
        const { lease } = await logLease();
        const [first, second] = await lease.transact((tx) =>
          Promise.allSettled([
            tx.savepoint(async (sp) => {
              await sleep(5);
              await insert(sp, 1);
              return "first";
            }),
            tx.savepoint(async (sp) => {
              await insert(sp, 2);
              return "second";
            }),
          ]),
        );
        expect(first).toStrictEqual({ status: "fulfilled", value: "first" });
        expect(second?.status).toBe("rejected");
        const reason = (second as PromiseRejectedResult).reason;
        expect(reason).toBeInstanceOf(RunledgerError);
        expect((reason as RunledgerError).code).toBe("savepoint_overlap");
        expect(await column(lease, "log")).toStrictEqual([1]);
      });

      it("fails with savepoint_overlap when the outer scope is used while its savepoint runs", async () => {
        const { lease } = await logLease();
        await lease.transact(async (tx) => {
          await tx.savepoint(async (sp) => {
            await insert(sp, 1);
            expect((await failureOf(() => insert(tx, 2))).code).toBe("savepoint_overlap");
            expect((await failureOf(() => tx.savepoint((other) => insert(other, 3)))).code).toBe(
              "savepoint_overlap",
            );
          });
          await insert(tx, 4);
        });
        expect(await column(lease, "log")).toStrictEqual([1, 4]);
      });

      it("rolls back a transaction whose Promise.all of two savepoints fails with savepoint_overlap, and the lease stays usable", async () => {
        const { s, lease } = await logLease();
        let stray: Promise<unknown> | undefined;
        const error = await failureOf(() =>
          lease.transact(async (tx) => {
            await insert(tx, 1);
            stray = slowSavepoint(tx);
            await Promise.all([stray, tx.savepoint((sp) => insert(sp, 3))]);
          }),
        );
        expect(error.code).toBe("savepoint_overlap");
        // The first savepoint's callback wakes up after its transaction is gone.
        await expectRecovered(() => s.entries, lease, stray, 4);
      });

      const nested =
        fx.subject.driver().asyncContext !== undefined
          ? fx.needs()
          : unavailable(
              "the driver's asyncContext",
              "without it a call from inside a callback cannot be told from a concurrent one, and queues",
            );
      nested.it(
        "refuses transact or read from inside the lease's own running callback with transaction_reentered",
        async () => {
          const { lease } = await logLease();
          await lease.transact(async (tx) => {
            await insert(tx, 1);
            const again = await failureOf(() => lease.transact((inner) => insert(inner, 2)));
            expect(again.code).toBe("transaction_reentered");
            expect(again.message).toMatch(/inside this lease's running/);
            expect(again.message).toMatch(/savepoint/);
            const reading = await failureOf(() => lease.read(async () => 0));
            expect(reading.code).toBe("transaction_reentered");
            await insert(tx, 3);
          });
          expect(await column(lease, "log")).toStrictEqual([1, 3]);
        },
      );

      it("queues operations on one lease from independent async chains in call order, none refused", async () => {
        const { lease } = await logLease();
        // Not nested, merely concurrent: the read waits for the running transaction.
        const running = lease.transact(async (tx) => {
          await sleep(10);
          await insert(tx, 1);
        });
        const seen = lease.read((r) =>
          r.execute("SELECT x FROM log").then(({ rows }) => rows.length),
        );
        await running;
        expect(await seen).toBe(1);
        const calls = Array.from({ length: 200 }, (_, i) =>
          i % 10 === 9
            ? lease.read(async (r) => (await r.execute("SELECT count(*) AS n FROM log")).rows[0]?.n)
            : lease.transact((tx) => insert(tx, i + 2)),
        );
        const outcomes = await Promise.all(calls);
        // Each read saw exactly the transactions called before it.
        outcomes.forEach((outcome, i) => {
          if (i % 10 === 9) expect(Number(outcome)).toBe(1 + i - Math.floor(i / 10));
        });
        const expected = [
          1,
          ...upTo(200)
            .filter((i) => i % 10 !== 9)
            .map((i) => i + 2),
        ];
        expect(await column(lease, "log")).toStrictEqual(expected);
      });

      it("refuses a transaction nested through another lease of the same location, where the driver has an async context", async () => {
        const { s, location, lease } = await logLease();
        const other = await s.open(location);
        if (fx.subject.driver().asyncContext === undefined) {
          // Without an async context the nesting cannot be told from concurrency:
          // concurrent use of two leases must still queue and both commit.
          await Promise.all([
            lease.transact((tx) => insert(tx, 1)),
            other.transact((tx) => insert(tx, 2)),
          ]);
          expect(await column(lease, "log")).toStrictEqual([1, 2]);
          return;
        }
        await lease.transact(async (tx) => {
          await insert(tx, 1);
          const nested = await failureOf(() => other.transact((inner) => insert(inner, 2)));
          expect(nested.code).toBe("transaction_reentered");
          expect((await failureOf(() => other.read(async () => 0))).code).toBe(
            "transaction_reentered",
          );
        });
        // Work scheduled inside a callback that runs after it ended is not nested.
        let later: Promise<number> | undefined;
        await lease.transact(async () => {
          later = new Promise((resolve, reject) =>
            setTimeout(() => {
              other
                .transact(async (tx) => {
                  await insert(tx, 3);
                  return 3;
                })
                .then(resolve, reject);
            }, 20),
          );
        });
        expect(await later).toBe(3);
        // Concurrent, not nested: both queue and commit.
        await Promise.all([
          lease.transact((tx) => insert(tx, 4)),
          other.transact((tx) => insert(tx, 5)),
        ]);
        expect(await column(lease, "log")).toStrictEqual([1, 3, 4, 5]);
      });

      fx.needs("local")
        .because(
          "a server has no query_only: a write inside lease.read is rolled back with the read, not refused",
        )
        .it("fails with write_in_read when read writes, and the entry stays writable", async () => {
          const { lease } = await logLease();
          for (const write of [
            (reader: ReadScope) => insert(reader, 1),
            (reader: ReadScope) => reader.execute("CREATE TABLE other (x)"),
          ]) {
            const error = await failureOf(() => lease.read(write));
            expect(error.code).toBe("write_in_read");
            expect(error.message).toMatch(/transact/);
          }
          await lease.transact((tx) => insert(tx, 2));
          expect(await column(lease, "log")).toStrictEqual([2]);
        });

      it("fails with callback_escaped when a transaction callback returns while its savepoint still runs", async () => {
        const { s, lease } = await logLease();
        let stray: Promise<unknown> | undefined;
        const error = await failureOf(() =>
          lease.transact(async (tx) => {
            await insert(tx, 1);
            stray = slowSavepoint(tx);
            stray.catch(() => undefined);
          }),
        );
        expect(error.code).toBe("callback_escaped");
        await expectRecovered(() => s.entries, lease, stray, 3);
      });

      it("fails with callback_escaped when a transaction callback returns while a statement still runs", async () => {
        const { lease } = await logLease({ driver: slowStatements(fx.driver(), 20) });
        await expectEscapedStatement((callback) => lease.transact(callback), 1);
        await lease.transact((tx) => insert(tx, 2));
        expect(await column(lease, "log")).toStrictEqual([2]);
      });

      it("fails with callback_escaped when a savepoint callback returns while a statement still runs, and undoes it", async () => {
        const { lease } = await logLease({ driver: slowStatements(fx.driver(), 20) });
        await lease.transact(async (tx) => {
          await insert(tx, 1);
          await expectEscapedStatement((callback) => tx.savepoint(callback), 2);
          await insert(tx, 3);
        });
        expect(await column(lease, "log")).toStrictEqual([1, 3]);
      });

      it("fails with lease_released when a released lease is used, and other leases go on", async () => {
        const { s, location, lease } = await logLease();
        const other = await s.open(location);
        await lease.release();
        for (const attempt of [
          () => lease.transact((tx) => insert(tx, 1)),
          () => lease.read(async () => 0),
        ]) {
          const error = await failureOf(attempt);
          expect(error.code).toBe("lease_released");
          expect(error.message).toMatch(/open/);
        }
        await other.transact((tx) => insert(tx, 2));
        expect(await column(other, "log")).toStrictEqual([2]);
      });

      it("fails with provider_closed when a lease or the store is used after store.close()", async () => {
        const { s, location, lease } = await logLease();
        await s.close();
        for (const attempt of [
          () => lease.transact((tx) => insert(tx, 1)),
          () => lease.read(async () => 0),
          () => s.open(location),
          () => s.open(fx.location(), { create: true }),
        ]) {
          expect((await failureOf(attempt)).code).toBe("provider_closed");
        }
        expect(s.entries).toStrictEqual([]);
      });
    });

    describe("poisoning", () => {
      async function faultyLeases() {
        const faults = new FaultInjector(fx.driver());
        const s = store(fx, { driver: faults.driver });
        const location = await seededLocation(fx, LOG);
        const first = await s.open(location);
        const second = await s.open(location);
        await first.transact((tx) => insert(tx, 0));
        return { faults, s, location, first, second };
      }

      function expectPoisoned(error: RunledgerError, failure: unknown): void {
        expect(error.code).toBe("poisoned");
        expect(error.details?.failure, "the original failure").toBe(failure);
        const cleanup = error.details?.cleanupFailure;
        expect(cleanup, "the cleanup failure").toBeInstanceOf(RunledgerError);
        expect((cleanup as RunledgerError).code).toBe("io_error");
        expect((cleanup as RunledgerError).details?.injected).toBe(true);
        expect(error.message).toMatch(/open/);
      }

      it("poisons the entry when ROLLBACK fails: the caller and every lease get poisoned, a new open sees only commits", async () => {
        const { faults, s, location, first, second } = await faultyLeases();
        faults.arm({ match: /^ROLLBACK$/, nth: 1 });
        const failure = new Error("the callback failed");
        let entered: () => void = () => {};
        const inside = new Promise<void>((resolve) => (entered = resolve));
        const doomed = failureOf(() =>
          first.transact(async (tx) => {
            await insert(tx, 1);
            entered();
            await sleep(10);
            throw failure;
          }),
        );
        await inside;
        const queued = failureOf(() => second.transact((tx) => insert(tx, 2)));

        expectPoisoned(await doomed, failure);
        expect(faults.fired).toBe(1);
        expect((await queued).code, "an operation queued behind it").toBe("poisoned");
        for (const attempt of [
          () => second.transact((tx) => insert(tx, 3)),
          () => second.read(async () => 0),
          () => first.read(async () => 0),
        ]) {
          const error = await failureOf(attempt);
          expect(error.code).toBe("poisoned");
          expect(error.details?.failure).toBe(failure);
        }

        faults.disarm();
        const fresh = await s.open(location);
        expect(s.entries).toStrictEqual([expect.objectContaining({ state: "ready", leases: 1 })]);
        expect(await column(fresh, "log")).toStrictEqual([0]);
        await fresh.transact((tx) => insert(tx, 4));
        // Releasing the poisoned leases does not touch the fresh entry.
        await first.release();
        await second.release();
        expect(s.entries).toStrictEqual([expect.objectContaining({ state: "ready", leases: 1 })]);
        expect(await column(fresh, "log")).toStrictEqual([0, 4]);
      });

      for (const cleanup of ["ROLLBACK TO", "RELEASE"] as const) {
        it(`poisons the entry when a savepoint's ${cleanup} fails after its callback threw`, async () => {
          const { faults, s, location, second, first } = await faultyLeases();
          faults.arm({ match: new RegExp(`^${cleanup} `), nth: 1 });
          const failure = new Error("the savepoint callback failed");
          const error = await failureOf(() =>
            first.transact(async (tx) => {
              await insert(tx, 1);
              await tx.savepoint(async (sp) => {
                await insert(sp, 2);
                throw failure;
              });
            }),
          );
          expectPoisoned(error, failure);
          expect((await failureOf(() => second.read(async () => 0))).code).toBe("poisoned");
          faults.disarm();
          expect(await column(await s.open(location), "log")).toStrictEqual([0]);
        });
      }

      it("never commits a transaction whose savepoint cleanup failed, even when the callback swallows the error", async () => {
        const { faults, s, location, first } = await faultyLeases();
        faults.arm({ match: /^ROLLBACK TO /, nth: 1 });
        const logged = faults.statements.length;
        const failure = new Error("the savepoint callback failed");
        let swallowed: unknown;
        const error = await failureOf(() =>
          first.transact(async (tx) => {
            await insert(tx, 1);
            try {
              await tx.savepoint(async (sp) => {
                await insert(sp, 2);
                throw failure;
              });
            } catch (caught) {
              swallowed = caught;
            }
            await insert(tx, 3).catch(() => undefined);
            return "as if nothing happened";
          }),
        );
        expect(swallowed).toBeInstanceOf(RunledgerError);
        expectPoisoned(swallowed as RunledgerError, failure);
        expect(error).toBe(swallowed);
        expect(faults.statements.slice(logged), "no COMMIT was attempted").not.toContain("COMMIT");
        faults.disarm();
        expect(await column(await s.open(location), "log")).toStrictEqual([0]);
      });

      it("poisons the entry when the ROLLBACK ending a read fails", async () => {
        const { faults, s, location, first, second } = await faultyLeases();
        faults.arm({ match: /^ROLLBACK$/, nth: 1 });
        const error = await failureOf(() =>
          first.read(
            async (reader) => (await reader.execute("SELECT count(*) AS n FROM log")).rows,
          ),
        );
        expect(error.code).toBe("poisoned");
        const cleanup = error.details?.cleanupFailure as RunledgerError | undefined;
        expect(cleanup?.details?.injected).toBe(true);
        expect((await failureOf(() => second.transact((tx) => insert(tx, 1)))).code).toBe(
          "poisoned",
        );
        faults.disarm();
        const fresh = await s.open(location);
        await fresh.transact((tx) => insert(tx, 2));
        expect(await column(fresh, "log")).toStrictEqual([0, 2]);
      });
    });
  });
}
