/**
 * Ended-transaction family (docs/contracts.md "A transaction SQLite ends by
 * itself"): after some failures SQLite rolls the whole transaction back
 * itself — here SQLITE_FULL, with `PRAGMA max_page_count` standing in for a
 * full disk. The caller gets the failure with its own code (`disk_full`,
 * never `poisoned`), mid-apply and mid-stream alike; nothing of the
 * transaction lands; a callback that catches the failure cannot write on
 * outside the transaction (every later call is refused with it); and the
 * same lease's next transaction succeeds once there is room again. A driver
 * that learns of the end only when it sends the undo, as a server's client
 * does, gives the same; so does an I/O error after which the session was
 * really rolled back (on a server too, whose client learns it from the
 * server's answer to the undo). That a cleanup which truly fails on a live
 * transaction still poisons is the transactions family's ("poisoning").
 */
import { type RunLease, RunledgerError } from "@runledger/core";
import type { Lease } from "@runledger/core/engine";
import type {
  BeginMode,
  Driver,
  DriverConnection,
  DriverTransaction,
  QueryResult,
  SqlValue,
} from "@runledger/core/port";
import { describe, expect, it } from "vitest";
import { FaultInjector } from "../faults.js";
import { type Fixtures, failureOf, refusalOf, sameBytes } from "../fixtures.js";
import { column, seededLocation, store } from "./contract-fixtures.js";
import { noise } from "./run-fixtures.js";
import { apply, dumpTables, newRun } from "./workspace-fixtures.js";

const MiB = 1024 * 1024;
/** The file that does not fit: twelve chunks. */
const BIG = noise("a file larger than the room left", 3 * MiB);
/** The room left on the "disk": the first chunks of BIG fit, a later one does not. */
const ROOM = MiB;
/** How BIG is streamed: 48 pieces, several to a chunk. */
const PIECE = 64 * 1024;

/**
 * Limits the database of `lease`'s connection to `room` bytes more than it
 * holds (SQLite answers SQLITE_FULL beyond, as on a full disk) and returns
 * what frees the space again: the limit as it was.
 */
async function leaveRoom(lease: Lease, room: number): Promise<() => Promise<void>> {
  const [pageSize, pageCount, limit] = await lease.read(async (reader) => {
    const values: number[] = [];
    for (const name of ["page_size", "page_count", "max_page_count"]) {
      const { rows } = await reader.execute(`PRAGMA ${name}`);
      values.push(Number(Object.values(rows[0] ?? {})[0]));
    }
    return values as [number, number, number];
  });
  const setLimit = (pages: number) =>
    lease.transact((tx) => tx.execute(`PRAGMA max_page_count = ${pages}`));
  await setLimit(pageCount + Math.ceil(room / pageSize));
  return async () => {
    await setLimit(limit);
  };
}

function expectDiskFull(failure: unknown): void {
  expect(failure).toBeInstanceOf(RunledgerError);
  const error = failure as RunledgerError;
  expect(error.code, error.message).toBe("disk_full");
  expect(error.sqlitePrimaryCode).toBe("SQLITE_FULL");
  expect(error.message).toMatch(/free disk space/);
}

/** BIG in pieces, counting how many were taken. */
function streamed(pulled: { count: number }): AsyncIterable<Uint8Array> {
  return (async function* () {
    for (let at = 0; at < BIG.length; at += PIECE) {
      pulled.count++;
      yield BIG.subarray(at, at + PIECE);
    }
  })();
}

/** A run holding one small file, its connection left ROOM bytes to grow. */
async function nearlyFullRun(fx: Fixtures, driver?: Driver) {
  const { lease } = await newRun(fx, driver === undefined ? {} : { driver });
  await apply(lease, { put: { "kept.txt": "kept" } });
  const freeSpace = await leaveRoom(lease.lease, ROOM);
  return { lease, freeSpace, before: await dumpTables(lease) };
}

/** The same lease applies BIG once there is room, and reads it back whole. */
async function appliesOnceFreed(lease: RunLease, freeSpace: () => Promise<void>): Promise<void> {
  await freeSpace();
  await lease.transact(async (tx) => {
    await tx.journal.append({ step: "retried" });
    await tx.workspace.apply({ put: { "big.bin": BIG } });
  });
  expect(sameBytes(await lease.read((r) => r.workspace.read("big.bin")), BIG)).toBe(true);
  expect(await lease.read((r) => r.workspace.read("kept.txt"))).toStrictEqual(
    new TextEncoder().encode("kept"),
  );
}

/**
 * Wraps a driver so that its transactions learn that SQLite ended them only
 * from the next statement, as a server's client does (it sends the undo, and
 * is told there is no transaction): right after the failed statement that
 * ended it, `active` still says true.
 */
function learnsLate(inner: Driver): Driver {
  const late = (transaction: DriverTransaction): DriverTransaction => {
    let unaware = false;
    const run = <T>(call: () => Promise<T>): Promise<T> => {
      const wasActive = transaction.active;
      unaware = false;
      return call().catch((error: unknown) => {
        unaware = wasActive;
        throw error;
      });
    };
    return {
      get active() {
        return unaware || transaction.active;
      },
      execute: (sql: string, params?: readonly SqlValue[]): Promise<QueryResult> =>
        run(() => transaction.execute(sql, params)),
      executeScript: (sql: string) => run(() => transaction.executeScript(sql)),
      commit: () => transaction.commit(),
      rollback: () => transaction.rollback(),
    };
  };
  return {
    name: `${inner.name}+late`,
    ...(inner.hash === undefined ? {} : { hash: inner.hash }),
    canonicalize: (location) => inner.canonicalize(location),
    async open(location, options): Promise<DriverConnection> {
      const connection = await inner.open(location, options);
      return {
        execute: (sql, params) => connection.execute(sql, params),
        executeScript: (sql) => connection.executeScript(sql),
        begin: async (mode: BeginMode) => late(await connection.begin(mode)),
        configure: (settings) => connection.configure(settings),
        close: () => connection.close(),
      };
    },
  };
}

export function describeEndedTransactions(fx: Fixtures): void {
  describe("a transaction SQLite ends by itself", () => {
    it("an I/O error after which SQLite rolled the transaction back keeps io_error, not poisoned; later calls are refused with it, nothing lands, and the same lease goes on", async () => {
      const faults = new FaultInjector(fx.driver());
      const { lease } = await newRun(fx, { driver: faults.driver });
      await apply(lease, { put: { "kept.txt": "kept" } });
      const before = await dumpTables(lease);
      // The second event of the transaction is the apply's, inside its savepoint.
      faults.arm({ match: /^INSERT INTO journal/, nth: 2, endsTransaction: true });
      let failure: unknown;
      let after: unknown;
      const thrown = await refusalOf(() =>
        lease.transact(async (tx) => {
          await tx.journal.append({ step: "before the apply" });
          failure = await refusalOf(() => tx.workspace.apply({ put: { "lost.txt": "lost" } }));
          after = await refusalOf(() => tx.journal.append({ step: "after it" }));
        }),
      );
      expect(faults.fired).toBe(1);
      expect(failure).toBeInstanceOf(RunledgerError);
      expect((failure as RunledgerError).code).toBe("io_error");
      expect((failure as RunledgerError).details?.injected).toBe(true);
      expect(after).toBe(failure);
      expect(thrown).toBe(failure);
      faults.disarm();
      expect(await dumpTables(lease)).toStrictEqual(before);
      await lease.transact((tx) => tx.workspace.apply({ put: { "later.txt": "later" } }));
      expect(await lease.read((r) => r.workspace.list())).toHaveLength(2);
    });

    fx.needs("local")
      .because("a server refuses PRAGMA max_page_count = N, the full disk these tests stand in")
      .describe("a full disk", () => {
        it("a large put that fills the disk mid-apply fails disk_full, not poisoned; nothing of the transaction lands, and the same lease applies it once there is room", async () => {
          const { lease, freeSpace, before } = await nearlyFullRun(fx);
          const error = await failureOf(() =>
            lease.transact(async (tx) => {
              await tx.journal.append({ step: "before the big file" });
              await tx.workspace.apply({ put: { "big.bin": BIG, "small.txt": "small" } });
            }),
          );
          expectDiskFull(error);
          expect(await dumpTables(lease)).toStrictEqual(before);
          await appliesOnceFreed(lease, freeSpace);
        });

        it("a file streamed in pieces that fills the disk mid-stream fails disk_full, not poisoned; nothing of the transaction lands, and the same lease applies it once there is room", async () => {
          const { lease, freeSpace, before } = await nearlyFullRun(fx);
          const pulled = { count: 0 };
          const error = await failureOf(() =>
            lease.transact(async (tx) => {
              await tx.journal.append({ step: "before the stream" });
              await tx.workspace.apply({ put: { "big.bin": streamed(pulled) } });
            }),
          );
          expectDiskFull(error);
          expect(pulled.count, "pieces were stored before the disk filled").toBeGreaterThan(
            ROOM / PIECE,
          );
          expect(pulled.count, "the stream failed before its end").toBeLessThan(BIG.length / PIECE);
          expect(await dumpTables(lease)).toStrictEqual(before);
          await appliesOnceFreed(lease, freeSpace);
        });

        it("a callback that catches disk_full cannot write on outside the transaction: every later call is refused with it, nothing lands", async () => {
          const { lease, freeSpace, before } = await nearlyFullRun(fx);
          let failure: unknown;
          const later: unknown[] = [];
          const thrown = await refusalOf(() =>
            lease.transact(async (tx) => {
              await tx.journal.append({ step: "before the big file" });
              failure = await refusalOf(() => tx.workspace.apply({ put: { "big.bin": BIG } }));
              later.push(await refusalOf(() => tx.journal.append({ step: "after it" })));
              later.push(await refusalOf(() => tx.workspace.apply({ put: { "a.txt": "a" } })));
              return "carried on";
            }),
          );
          expectDiskFull(failure);
          expect(later).toStrictEqual([failure, failure]);
          expect(thrown).toBe(failure);
          expect(await dumpTables(lease)).toStrictEqual(before);
          await appliesOnceFreed(lease, freeSpace);
        });

        it("a driver that learns of the end only when it sends the undo, as a server's client does, gives the same: disk_full, later calls refused, nothing lands", async () => {
          const { lease, freeSpace, before } = await nearlyFullRun(fx, learnsLate(fx.driver()));
          let failure: unknown;
          let after: unknown;
          const thrown = await refusalOf(() =>
            lease.transact(async (tx) => {
              failure = await refusalOf(() => tx.workspace.apply({ put: { "big.bin": BIG } }));
              after = await refusalOf(() => tx.journal.append({ step: "after it" }));
            }),
          );
          expectDiskFull(failure);
          expect(after).toBe(failure);
          expect(thrown).toBe(failure);
          expect(await dumpTables(lease)).toStrictEqual(before);
          await appliesOnceFreed(lease, freeSpace);
        });

        it("raw SQL that fills the disk outside any savepoint fails disk_full; a later statement in the callback is refused with it, and the lease goes on", async () => {
          const location = await seededLocation(fx, "CREATE TABLE log (x BLOB NOT NULL)");
          const lease = await store(fx).open(location);
          await lease.transact((tx) => tx.execute("INSERT INTO log (x) VALUES (1)"));
          const freeSpace = await leaveRoom(lease, ROOM);
          let failure: unknown;
          let after: unknown;
          const thrown = await refusalOf(() =>
            lease.transact(async (tx) => {
              await tx.execute("INSERT INTO log (x) VALUES (2)");
              failure = await refusalOf(() =>
                tx.execute("INSERT INTO log (x) VALUES (?)", [new Uint8Array(BIG)]),
              );
              after = await refusalOf(() => tx.execute("INSERT INTO log (x) VALUES (3)"));
              return "carried on";
            }),
          );
          expectDiskFull(failure);
          expect(after).toBe(failure);
          expect(thrown).toBe(failure);
          expect(await column(lease, "log")).toStrictEqual([1]);
          await freeSpace();
          await lease.transact((tx) => tx.execute("INSERT INTO log (x) VALUES (4)"));
          expect(await column(lease, "log")).toStrictEqual([1, 4]);
        });
      });
  });
}
