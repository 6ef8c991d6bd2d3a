/**
 * Cross-process family (docs/contracts.md): between processes SQLite's own lock is the
 * serialization point. Several processes writing through core lose no write
 * and see no `busy` under the default timeout; a process that keeps the lock
 * past a short deadline turns the other's write into `busy`, promptly, with
 * nothing written.
 */
import { expect, it } from "vitest";
import { type Fixtures, failureOf } from "../fixtures.js";
import { column, seededLocation, startCounter, store } from "./contract-fixtures.js";

const PROCESSES = 4;
const TRANSACTIONS_EACH = 2_000;
const BUSY_DEADLINE_MS = 300;
/** The deadline plus the margin a `busy` may take to arrive. */
const BUSY_ARRIVES_WITHIN_MS = 1_500;

export function describeCrossProcess(fx: Fixtures): void {
  fx.needs("files", "childProcesses", "walSharedMemory").describe("cross-process contract", () => {
    it(`counts exactly ${PROCESSES * TRANSACTIONS_EACH} from ${PROCESSES} processes × ${TRANSACTIONS_EACH} transactions, none of them busy`, async ({
      annotate,
    }) => {
      const location = await seededLocation(
        fx,
        "CREATE TABLE counter (id INTEGER PRIMARY KEY, n INTEGER NOT NULL)",
        "INSERT INTO counter (id, n) VALUES (1, 0)",
      );
      const children = Array.from({ length: PROCESSES }, () =>
        startCounter(fx, location, TRANSACTIONS_EACH),
      );
      await Promise.all(children.map((child) => child.next("ready", 30_000)));
      const started = Date.now();
      for (const child of children) child.tell("go");
      // A process that meets `busy`, or any other failure, reports "failed" and fails the test here.
      const reports = await Promise.all(children.map((child) => child.next("done", 280_000)));
      const elapsed = Date.now() - started;
      expect(await Promise.all(children.map((child) => child.exited))).toStrictEqual(
        Array(PROCESSES).fill(0),
      );

      expect(reports.map((report) => report.committed)).toStrictEqual(
        Array(PROCESSES).fill(TRANSACTIONS_EACH),
      );
      const lease = await store(fx).open(location);
      expect(await column(lease, "counter", "n")).toStrictEqual([PROCESSES * TRANSACTIONS_EACH]);
      await annotate(
        `${PROCESSES * TRANSACTIONS_EACH} transactions in ${elapsed} ms ` +
          `(per process: ${reports.map((report) => report.ms).join(", ")} ms)`,
      );
    }, 300_000);

    it(`fails with busy soon after a ${BUSY_DEADLINE_MS} ms deadline while another process holds the write lock, writing nothing`, async ({
      annotate,
    }) => {
      const location = await seededLocation(fx, "CREATE TABLE log (x INTEGER NOT NULL)");
      const lease = await store(fx, { busyTimeoutMs: BUSY_DEADLINE_MS }).open(location);
      const holder = await fx.holdWriteLock(location, ["INSERT INTO log (x) VALUES (1)"]);

      const started = Date.now();
      const error = await failureOf(() =>
        lease.transact((tx) => tx.execute("INSERT INTO log (x) VALUES (2)")),
      );
      const elapsed = Date.now() - started;
      expect(error.code).toBe("busy");
      expect(error.sqlitePrimaryCode).toBe("SQLITE_BUSY");
      expect(elapsed, "it waited for the deadline").toBeGreaterThanOrEqual(BUSY_DEADLINE_MS - 10);
      expect(elapsed, "and not much longer").toBeLessThan(BUSY_ARRIVES_WITHIN_MS);

      await holder.release("commit");
      expect(await column(lease, "log"), "only the holder's write landed").toStrictEqual([1]);
      await lease.transact((tx) => tx.execute("INSERT INTO log (x) VALUES (3)"));
      expect(await column(lease, "log")).toStrictEqual([1, 3]);
      await annotate(`busy after ${elapsed} ms`);
    }, 60_000);
  });
}
