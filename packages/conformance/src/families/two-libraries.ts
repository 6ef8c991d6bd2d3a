/**
 * Two SQLite libraries on one file at once. Another adapter, in a child
 * process (two libraries never share a file inside one process), holds
 * BEGIN IMMEDIATE with a row written; a write here through core fails `busy`
 * within its deadline or waits for the lock, and never lands beside the
 * other's: once the lock is let go both writes are in the file, exactly once,
 * and `integrity_check` is ok. A driver whose locks other libraries do not
 * see (its own lock files) writes over the other's transaction and loses a
 * write: it declares no `sharedLocks`.
 */
import type { Lease } from "@runledger/core/engine";
import { expect } from "vitest";
import { type Fixtures, failureOf } from "../fixtures.js";
import { seededLocation, sleep, store } from "./contract-fixtures.js";

const TABLE = "CREATE TABLE entry (id INTEGER PRIMARY KEY, writer TEXT NOT NULL)";
/** Short enough to keep the suite fast, long enough to be seen waiting. */
const SHORT_DEADLINE_MS = 300;
/** What the second writer may wait in all: far more than the holder is held. */
const LONG_DEADLINE_MS = 20_000;
/** How long the holder keeps the lock while the second writer waits. */
const HELD_WHILE_WAITING_MS = 400;

async function entries(lease: Lease): Promise<unknown[]> {
  return lease.read(async (reader) => {
    const { rows } = await reader.execute("SELECT id, writer FROM entry ORDER BY id");
    return rows;
  });
}

async function integrity(lease: Lease): Promise<unknown> {
  return lease.read(async (reader) => (await reader.execute("PRAGMA integrity_check")).rows);
}

export function describeTwoLibraries(fx: Fixtures): void {
  const { describe, it } = fx.needs("files", "peers", "sharedLocks");
  describe("two libraries on one file at once", () => {
    for (const peer of fx.peers) {
      it(`a write here fails busy within its deadline while ${peer.name} holds the write lock, and neither write is lost`, async () => {
        const location = await seededLocation(fx, TABLE);
        const holder = await fx.holdWriteLock(
          location,
          ["INSERT INTO entry (id, writer) VALUES (1, 'peer')"],
          peer,
        );
        const lease = await store(fx, { busyTimeoutMs: SHORT_DEADLINE_MS }).open(location);
        const started = Date.now();
        const refused = await failureOf(() =>
          lease.transact((tx) => tx.execute("INSERT INTO entry (id, writer) VALUES (2, 'here')")),
        );
        expect(refused.code).toBe("busy");
        expect(Date.now() - started).toBeGreaterThanOrEqual(SHORT_DEADLINE_MS - 10);
        // The other library's uncommitted row is not seen here.
        expect(await entries(lease)).toStrictEqual([]);

        await holder.release("commit");
        await lease.transact((tx) =>
          tx.execute("INSERT INTO entry (id, writer) VALUES (2, 'here')"),
        );
        expect(await entries(lease)).toStrictEqual([
          { id: 1, writer: "peer" },
          { id: 2, writer: "here" },
        ]);
        expect(await integrity(lease)).toStrictEqual([{ integrity_check: "ok" }]);
      });

      it(`a write here waits while ${peer.name} holds the write lock and lands after its commit, both kept`, async () => {
        const location = await seededLocation(fx, TABLE);
        const holder = await fx.holdWriteLock(
          location,
          ["INSERT INTO entry (id, writer) VALUES (1, 'peer')"],
          peer,
        );
        const lease = await store(fx, { busyTimeoutMs: LONG_DEADLINE_MS }).open(location);
        let landed = false;
        const waiting = lease
          .transact(async (tx) => {
            // The holder's row is committed before this write can start: it reads it.
            const { rows } = await tx.execute("SELECT count(*) AS n FROM entry");
            await tx.execute("INSERT INTO entry (id, writer) VALUES (2, ?)", [
              `after ${rows[0]?.n}`,
            ]);
          })
          .then(() => {
            landed = true;
          });
        await sleep(HELD_WHILE_WAITING_MS);
        expect(landed, "the write waited for the other library's lock").toBe(false);
        await holder.release("commit");
        await waiting;
        expect(await entries(lease)).toStrictEqual([
          { id: 1, writer: "peer" },
          { id: 2, writer: "after 1" },
        ]);
        expect(await integrity(lease)).toStrictEqual([{ integrity_check: "ok" }]);
      }, 60_000);
    }
  });
}
