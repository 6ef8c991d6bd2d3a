/**
 * A writer killed (SIGKILL: no rollback, no close) while it holds the write
 * lock with uncommitted work. The operating system drops a dead process's
 * file locks, so the next opener proceeds within its busy timeout, SQLite
 * recovers the file (a hot rollback journal, or WAL frames never committed)
 * and nothing of the killed transaction is there. A driver whose lock
 * outlives its process (a lock file or directory left behind) keeps every
 * later opener `busy` for ever: it declares no `crashSafeLocks`.
 */
import { describe, expect } from "vitest";
import type { Fixtures } from "../fixtures.js";
import type { Gated } from "../requirements.js";
import type { ConformanceChild } from "../subject.js";
import { seededLocation, store } from "./contract-fixtures.js";

const TABLE = "CREATE TABLE entry (id INTEGER PRIMARY KEY, writer TEXT NOT NULL, body BLOB)";
/** The next opener's deadline. */
const BUSY_TIMEOUT_MS = 5_000;
/**
 * What the killed writer does inside its transaction: enough rows, with a
 * cache small enough, that SQLite spills pages to the database file (or WAL)
 * before commit, so recovery has real work to undo.
 */
const KILLED_WORK = [
  "PRAGMA cache_size = 8",
  "INSERT INTO entry (id, writer, body) " +
    "WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < 400) " +
    "SELECT 1000 + i, 'killed', randomblob(2048) FROM n",
];

/** Where the file is before the writer is killed: WAL (as core leaves it) or a rollback journal. */
const MODES = [
  { mode: "WAL", journal: "wal" },
  { mode: "rollback-journal", journal: "delete" },
] as const;

export function describeKilledWriter(fx: Fixtures): void {
  describe("a writer killed while holding the lock", () => {
    const writers: [string, () => ConformanceChild, Gated][] = [
      [
        "this adapter",
        () => fx.subject.child as ConformanceChild,
        fx.needs("files", "childProcesses", "crashSafeLocks"),
      ],
      ...fx.peers.map((peer): [string, () => ConformanceChild, Gated] => [
        peer.name,
        () => peer,
        fx.needs("files", "peers", "sharedLocks", "crashSafeLocks"),
      ]),
    ];
    for (const [who, driver, { it }] of writers) {
      for (const { mode, journal } of MODES) {
        it(`lets the next opener write within its busy timeout after ${who} was killed holding the lock on a ${mode} file, with nothing of the killed transaction left`, async () => {
          const before = "INSERT INTO entry (id, writer) VALUES (1, 'before')";
          // A raw connection leaves a new file in rollback-journal mode; a store makes it WAL.
          const location =
            journal === "delete"
              ? await fx.database(`${TABLE}; ${before};`)
              : await seededLocation(fx, TABLE, before);
          const holder = await fx.holdWriteLock(location, KILLED_WORK, driver());
          await holder.crash();

          const started = Date.now();
          const lease = await store(fx, { busyTimeoutMs: BUSY_TIMEOUT_MS }).open(location);
          await lease.transact((tx) =>
            tx.execute("INSERT INTO entry (id, writer) VALUES (2, 'next')"),
          );
          const elapsed = Date.now() - started;
          expect(elapsed, "the dead writer's lock did not hold the next opener").toBeLessThan(
            BUSY_TIMEOUT_MS,
          );
          const rows = await lease.read(async (reader) => {
            const { rows } = await reader.execute("SELECT id, writer FROM entry ORDER BY id");
            return rows;
          });
          expect(rows).toStrictEqual([
            { id: 1, writer: "before" },
            { id: 2, writer: "next" },
          ]);
          const check = await lease.read(
            async (reader) => (await reader.execute("PRAGMA integrity_check")).rows,
          );
          expect(check).toStrictEqual([{ integrity_check: "ok" }]);
        }, 60_000);
      }
    }
  });
}
