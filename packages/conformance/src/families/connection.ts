/**
 * Connection family (docs/contracts.md): a store keeps one entry per canonical
 * location, runs each entry's operations one at a time in arrival order,
 * never makes two entries wait for each other, tears leases and itself down
 * in a defined order, leaves nothing behind when an open fails, and sets WAL
 * and the asked-for durability on every connection it opens.
 */
import { existsSync } from "node:fs";
import { mkdir, readFile, symlink } from "node:fs/promises";
import { dirname, join, relative } from "node:path";
import type { Lease } from "@runledger/core/engine";
import { describe, expect, it } from "vitest";
import { type Fixtures, failureOf, sameBytes } from "../fixtures.js";
import { column, seededLocation, sleep, store } from "./contract-fixtures.js";

const LOG = "CREATE TABLE log (x INTEGER NOT NULL)";

/** Whether the entry's connection still holds the TEMP table `marker` (it dies with the connection). */
async function hasMarker(lease: Lease): Promise<boolean> {
  return lease.read(async (reader) => {
    const { rows } = await reader.execute(
      "SELECT count(*) AS n FROM temp.sqlite_master WHERE name = 'marker'",
    );
    return rows[0]?.n === 1;
  });
}

/** Marks the lease's connection with the TEMP table `marker` (see hasMarker). */
async function mark(lease: Lease): Promise<void> {
  await lease.transact((tx) => tx.execute("CREATE TEMP TABLE marker (x)"));
}

async function pragma(lease: Lease, name: string): Promise<unknown> {
  return lease.transact(async (tx) => {
    const { rows } = await tx.execute(`PRAGMA ${name}`);
    return rows[0]?.[name];
  });
}

export function describeConnection(fx: Fixtures): void {
  describe("connection contract", () => {
    describe("entries", () => {
      fx.needs("files").it(
        "reaches one entry through a relative path, dir/../dir/x and a symlinked directory",
        async () => {
          const scratch = await fx.scratchDirectory();
          const directory = join(scratch, "real");
          await mkdir(directory);
          await symlink(directory, join(scratch, "linked"), "dir");
          const file = join(directory, "run.db");
          const spellings = [
            relative(process.cwd(), file),
            `${directory}/../real/run.db`,
            join(scratch, "linked", "run.db"),
          ];
          const s = store(fx);
          const leases: Lease[] = [];
          for (const spelling of spellings) leases.push(await s.open(spelling, { create: true }));
          expect(s.entries).toStrictEqual([{ location: file, state: "ready", leases: 3 }]);
          for (const lease of leases) expect(lease.location).toBe(file);

          // One connection: a TEMP table made through one spelling is seen through the others.
          await mark(leases[0]!);
          for (const lease of leases) expect(await hasMarker(lease)).toBe(true);
        },
      );

      it("shares one opening among concurrent opens of one location", async () => {
        let establishing = 0;
        const s = store(fx, {
          establish: async (context) => {
            establishing++;
            await sleep(20);
            await context.configure();
          },
        });
        const location = fx.location();
        const leases = await Promise.all([
          s.open(location, { create: true }),
          s.open(location, { create: true }),
          s.open(location),
        ]);
        expect(establishing).toBe(1);
        expect(s.entries).toHaveLength(1);
        expect(s.entries[0]?.leases).toBe(3);
        expect(new Set(leases.map((lease) => lease.location)).size).toBe(1);
      });
    });

    describe("queue", () => {
      it("runs 100 operations queued on leases of one location one at a time, in arrival order", async () => {
        const s = store(fx);
        const location = await seededLocation(fx, LOG);
        const leases: Lease[] = [];
        for (let i = 0; i < 100; i++) leases.push(await s.open(location));
        expect(s.entries).toHaveLength(1);

        // Arrival order is i; the lease each operation uses is scrambled.
        const leaseFor = (i: number) => leases[(i * 37) % 100]!;
        let running = 0;
        let mostAtOnce = 0;
        const seen: number[] = [];
        const operations = Array.from({ length: 100 }, (_, i) =>
          leaseFor(i).transact(async (tx) => {
            running++;
            mostAtOnce = Math.max(mostAtOnce, running);
            const { rows } = await tx.execute("SELECT count(*) AS n FROM log");
            seen.push(rows[0]?.n as number);
            // Some operations yield to timers: a queue that let them overlap would reorder.
            if (i % 7 === 3) await sleep(3);
            else await Promise.resolve();
            await tx.execute("INSERT INTO log (x) VALUES (?)", [i]);
            running--;
            return i;
          }),
        );
        expect(await Promise.all(operations)).toStrictEqual(
          Array.from({ length: 100 }, (_, i) => i),
        );
        expect(mostAtOnce).toBe(1);
        expect(seen, "each operation saw exactly the ones before it").toStrictEqual(
          Array.from({ length: 100 }, (_, i) => i),
        );
        expect(await column(leases[0]!, "log")).toStrictEqual(
          Array.from({ length: 100 }, (_, i) => i),
        );
      });

      it("does not make another location wait for a transaction that awaits a 200 ms timer", async () => {
        const s = store(fx);
        const [a, b] = [await seededLocation(fx, LOG), await seededLocation(fx, LOG)];
        const onA = await s.open(a);
        const secondOnA = await s.open(a);
        const onB = await s.open(b);
        const events: string[] = [];

        let entered: () => void = () => {};
        const aEntered = new Promise<void>((resolve) => (entered = resolve));
        const slow = onA.transact(async (tx) => {
          await tx.execute("INSERT INTO log (x) VALUES (1)");
          entered();
          await sleep(200);
          events.push("A resumed");
          await tx.execute("INSERT INTO log (x) VALUES (2)");
        });
        await aEntered;
        const started = Date.now();
        const sameEntry = secondOnA
          .read(async (reader) => (await reader.execute("SELECT count(*) AS n FROM log")).rows[0])
          .then((row) => {
            events.push("second lease on A done");
            return row?.n;
          });
        await onB.transact(async (tx) => {
          await tx.execute("INSERT INTO log (x) VALUES (1)");
        });
        events.push("B done");
        const bMs = Date.now() - started;
        await slow;
        expect(await sameEntry, "the other lease on A waited for A's commit").toBe(2);
        expect(events, `B took ${bMs} ms`).toStrictEqual([
          "B done",
          "A resumed",
          "second lease on A done",
        ]);
      });
    });

    describe("teardown", () => {
      /** Two leases on one entry; the first marks the connection, then is released. */
      async function twoLeasesFirstReleased() {
        const s = store(fx);
        const location = await seededLocation(fx, LOG);
        const first = await s.open(location);
        const second = await s.open(location);
        await mark(first);
        await first.release();
        return { s, location, second };
      }

      // A TEMP table tells one physical connection from another; a server refuses them.
      const itWithTempTables = fx
        .needs("local")
        .because("sqld refuses TEMP tables, which mark one connection").it;
      itWithTempTables("leaves the other leases working when one lease is released", async () => {
        const { s, second } = await twoLeasesFirstReleased();
        expect(s.entries).toHaveLength(1);
        expect(s.entries[0]?.leases).toBe(1);
        await second.transact((tx) => tx.execute("INSERT INTO log (x) VALUES (7)"));
        expect(await column(second, "log")).toStrictEqual([7]);
        expect(await hasMarker(second), "still the same connection").toBe(true);
      });

      itWithTempTables("closes the entry with its last lease", async () => {
        const { s, location, second } = await twoLeasesFirstReleased();
        await second.release();
        expect(s.entries).toStrictEqual([]);
        const again = await s.open(location);
        expect(await hasMarker(again), "a new open makes a new connection").toBe(false);
      });

      itWithTempTables(
        "keeps an entry for the idle retention after its last lease, and reuses it within it",
        async () => {
          const retentionMs = 500;
          const s = store(fx, { idleRetentionMs: retentionMs });
          const location = await seededLocation(fx, LOG);
          const lease = await s.open(location);
          await mark(lease);
          await lease.release();
          expect(s.entries).toStrictEqual([expect.objectContaining({ state: "ready", leases: 0 })]);

          await sleep(100);
          const reopened = await s.open(location);
          expect(s.entries[0]?.leases).toBe(1);
          expect(await hasMarker(reopened), "the retained connection is reused").toBe(true);
          await reopened.release();
          const released = Date.now();

          await sleep(150);
          expect(s.entries, "still retained well inside the retention").toHaveLength(1);
          while (s.entries.length > 0 && Date.now() - released < retentionMs + 3000)
            await sleep(20);
          expect(s.entries, "closed once the retention has passed").toStrictEqual([]);
          expect(Date.now() - released).toBeGreaterThanOrEqual(retentionMs - 5);
          const fresh = await s.open(location);
          expect(await hasMarker(fresh)).toBe(false);
        },
      );

      it("lets queued operations finish on store.close(), then refuses leases and opens with provider_closed", async () => {
        const s = store(fx);
        const location = await seededLocation(fx, LOG);
        const other = await seededLocation(fx, LOG);
        const leases = [await s.open(location), await s.open(location), await s.open(other)];
        const settled: string[] = [];
        const operations = leases.map((lease, i) =>
          lease
            .transact(async (tx) => {
              await sleep(30);
              await tx.execute("INSERT INTO log (x) VALUES (?)", [i]);
              return `result ${i}`;
            })
            .finally(() => settled.push(`operation ${i}`)),
        );
        const closing = s.close().then(() => settled.push("close"));

        // While the store closes: no new open, no new operation.
        expect((await failureOf(() => s.open(location))).code).toBe("provider_closed");
        expect((await failureOf(() => leases[0]!.read(async () => 1))).code).toBe(
          "provider_closed",
        );

        expect(await Promise.all(operations)).toStrictEqual(["result 0", "result 1", "result 2"]);
        await closing;
        expect(settled.at(-1), "close resolves after every queued operation").toBe("close");
        expect(s.entries).toStrictEqual([]);
        for (const lease of leases) {
          expect((await failureOf(() => lease.transact(async () => 1))).code).toBe(
            "provider_closed",
          );
          expect((await failureOf(() => lease.read(async () => 1))).code).toBe("provider_closed");
        }
        expect((await failureOf(() => s.open(location))).code).toBe("provider_closed");
        // Releasing afterwards and closing again are harmless.
        for (const lease of leases) await lease.release();
        await s.close();

        const check = await store(fx).open(location);
        expect(await column(check, "log")).toStrictEqual([0, 1]);
      });

      it("treats a second release of a lease as harmless", async () => {
        const s = store(fx);
        const location = await seededLocation(fx, LOG);
        const first = await s.open(location);
        const second = await s.open(location);
        await first.release();
        await first.release();
        await first[Symbol.asyncDispose]();
        expect(s.entries, "the second lease still holds the entry").toStrictEqual([
          expect.objectContaining({ state: "ready", leases: 1 }),
        ]);
        await second.transact((tx) => tx.execute("INSERT INTO log (x) VALUES (1)"));
        await second.release();
        await second.release();
        expect(s.entries).toStrictEqual([]);
      });
    });

    describe("a failed open", () => {
      it("of a missing file without create leaves no entry and creates no file", async () => {
        const s = store(fx);
        const location = fx.location();
        const error = await failureOf(() => s.open(location));
        expect(error.code).toBe("cannot_open");
        expect(s.entries).toStrictEqual([]);
        if (fx.files) expect(existsSync(location)).toBe(false);
        // The same store creates it when asked to.
        await s.open(location, { create: true });
        expect(s.entries).toHaveLength(1);
      });

      fx.needs("files").it(
        "in a missing directory leaves no entry and creates nothing",
        async () => {
          const s = store(fx);
          const missing = join(await fx.scratchDirectory(), "missing");
          const error = await failureOf(() => s.open(join(missing, "run.db"), { create: true }));
          expect(error.code).toBe("cannot_open");
          expect(s.entries).toStrictEqual([]);
          expect(existsSync(missing)).toBe(false);
        },
      );

      it("whose establish step fails leaves no entry, the file untouched, and the next open starts afresh", async () => {
        const location = await seededLocation(fx, LOG);
        const before = fx.files ? await readFile(location) : undefined;
        const refusal = new Error("establish refused this database");
        let attempts = 0;
        const s = store(fx, {
          establish: async (context) => {
            attempts++;
            if (attempts === 1) throw refusal;
            await context.configure();
          },
        });
        await expect(s.open(location)).rejects.toBe(refusal);
        expect(s.entries).toStrictEqual([]);
        if (before !== undefined) {
          expect(sameBytes(await readFile(location), before), "the file is untouched").toBe(true);
          expect(existsSync(dirname(location))).toBe(true);
        }
        const lease = await s.open(location);
        expect(attempts).toBe(2);
        expect(s.entries).toStrictEqual([expect.objectContaining({ state: "ready", leases: 1 })]);
        expect(await column(lease, "log")).toStrictEqual([]);
      });
    });

    fx.needs("files").describe("durability", () => {
      it("opens in WAL with synchronous NORMAL (1) by default", async () => {
        const lease = await store(fx).open(fx.location(), { create: true });
        expect(await pragma(lease, "journal_mode")).toBe("wal");
        expect(await pragma(lease, "synchronous")).toBe(1);
      });

      it("sets synchronous FULL (2) with durability full", async () => {
        const lease = await store(fx, { durability: "full" }).open(fx.location(), {
          create: true,
        });
        expect(await pragma(lease, "journal_mode")).toBe("wal");
        expect(await pragma(lease, "synchronous")).toBe(2);
      });
    });
  });
}
