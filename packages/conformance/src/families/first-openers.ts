/**
 * Concurrent first openers (docs/contracts.md): several processes open the
 * same new path with `create` at the same moment. Exactly one creates the
 * run; every other one opens that run — waiting on the creator's lock and
 * retrying the switch to WAL while another opener keeps it busy — and none
 * fails, creates a second run or sees a half-made one. Round after round, on
 * a new path each time.
 *
 * The rounds rarely make the switch to WAL itself answer busy (SQLite's busy
 * handler waits out most collisions), so the retry around that switch is
 * proven on its own: a wrapper answers SQLITE_BUSY to the switch a few times,
 * then for longer than the deadline.
 */
import { join } from "node:path";
import { expect, it } from "vitest";
import { BusyAtJournalSwitch } from "../busy-switch.js";
import type { FirstOpenerMessage, FirstOpenerRequest } from "../child/first-opener-protocol.js";
import {
  ChildProcess,
  type ChildScript,
  type Fixtures,
  failureOf,
  subjectChild,
} from "../fixtures.js";
import { CREATE, carriesInjected, copyInto, pragma, runStore, v1BaseFile } from "./run-fixtures.js";

const PROCESSES = 4;
const ROUNDS = 20;

const FIRST_OPENER: ChildScript<FirstOpenerRequest, FirstOpenerMessage, "go"> = {
  file: "first-opener",
  name: "first opener",
  commands: ["go"],
};

export function describeFirstOpeners(fx: Fixtures): void {
  fx.needs("files", "childProcesses", "walSharedMemory").describe(
    "concurrent first openers",
    () => {
      it(`${PROCESSES} processes × ${ROUNDS} rounds open one new path with create: exactly one creates it`, async ({
        annotate,
      }) => {
        const directory = await fx.scratchDirectory();
        const locations = Array.from({ length: ROUNDS }, (_, round) =>
          join(directory, `round-${round}.sqlite`),
        );
        const children = Array.from({ length: PROCESSES }, (_, index) =>
          ChildProcess.start(FIRST_OPENER, subjectChild(fx.subject), {
            locations,
            create: CREATE,
            clock: 1_000 + index,
          }),
        );
        const creators = new Map<number, number>();
        try {
          for (let round = 0; round < ROUNDS; round++) {
            await Promise.all(children.map((child) => child.next("ready", 60_000)));
            for (const child of children) child.tell("go");
            const opened = await Promise.all(children.map((child) => child.next("opened", 60_000)));
            const createdAt = opened.map((message) => message.createdAt);
            // Every process found the same run, made by one of them.
            expect(new Set(createdAt).size, `round ${round}: ${createdAt}`).toBe(1);
            const creator = (createdAt[0] as number) - 1_000;
            expect(creator).toBeGreaterThanOrEqual(0);
            expect(creator).toBeLessThan(PROCESSES);
            creators.set(creator, (creators.get(creator) ?? 0) + 1);
          }
          expect(await Promise.all(children.map((child) => child.exited))).toStrictEqual(
            Array(PROCESSES).fill(0),
          );
        } finally {
          for (const child of children) child.kill();
        }
        // Each file holds one run, in WAL mode, that opens and verifies.
        for (const location of locations) {
          expect(await pragma(fx, location, "journal_mode")).toBe("wal");
          const lease = await runStore(fx).open(location, { create: CREATE });
          const run = await lease.read((r) => r.run.get());
          expect([run.workflowId, run.runId, run.status]).toEqual([
            CREATE.workflowId,
            CREATE.runId,
            "running",
          ]);
          expect((await lease.verify()).ok).toBe(true);
          await lease.release();
        }
        await annotate(
          `creators by process: ${[...creators.entries()].map(([p, n]) => `${p}: ${n}`).join(", ")}`,
        );
      }, 300_000);
    },
  );

  describeBusySwitch(fx);
}

/** How many times the switch answers busy before it is let through. */
const BUSY_ANSWERS = 3;

/**
 * The switch to WAL answering busy, on a new run (created, then switched) and
 * on an existing run still in rollback-journal mode (opened, then switched).
 */
function describeBusySwitch(fx: Fixtures): void {
  const base = v1BaseFile(fx);
  const local = fx
    .needs("local")
    .because("a server owns its journal mode: there is no switch to WAL to answer busy to");
  local.describe("the switch to WAL answering busy", () => {
    local.it(
      `a first opener whose switch to WAL answers busy ${BUSY_ANSWERS} times retries it and opens the run in WAL`,
      async () => {
        const location = fx.location();
        const busy = new BusyAtJournalSwitch(fx.driver(), BUSY_ANSWERS);
        const store = runStore(fx, { driver: busy.driver, busyTimeoutMs: 30_000 });
        const lease = await store.open(location, { create: CREATE });
        expect((await lease.read((r) => r.run.get())).runId).toBe(CREATE.runId);
        await lease.release();
        expect(busy.answers).toEqual([...Array(BUSY_ANSWERS).fill("busy"), "switched"]);
        expect(await pragma(fx, location, "journal_mode")).toBe("wal");
      },
    );

    fx.needs("files").it(
      `a plain open of a run in rollback-journal mode whose switch answers busy ${BUSY_ANSWERS} times retries it`,
      async () => {
        const location = await copyInto(fx, await base());
        expect(await pragma(fx, location, "journal_mode")).toBe("delete");
        const busy = new BusyAtJournalSwitch(fx.driver(), BUSY_ANSWERS);
        const store = runStore(fx, { driver: busy.driver, busyTimeoutMs: 30_000 });
        const lease = await store.open(location);
        expect((await lease.verify()).ok).toBe(true);
        await lease.release();
        expect(busy.answers).toEqual([...Array(BUSY_ANSWERS).fill("busy"), "switched"]);
        expect(await pragma(fx, location, "journal_mode")).toBe("wal");
      },
    );

    local.it(
      "a switch to WAL that stays busy past busyTimeoutMs fails busy, after retries, and leaves no entry",
      async () => {
        const location = fx.location();
        const busy = new BusyAtJournalSwitch(fx.driver(), Number.POSITIVE_INFINITY);
        const store = runStore(fx, { driver: busy.driver, busyTimeoutMs: 200 });
        const error = await failureOf(() => store.open(location, { create: CREATE }));
        expect(error.code).toBe("busy");
        expect(error.sqliteCode).toBe("SQLITE_BUSY");
        expect(error.message).toMatch(/busyTimeoutMs/);
        expect(carriesInjected(error), "the cause is the injected answer").toBe(true);
        // Retried until the deadline, never let through.
        expect(busy.answers.length).toBeGreaterThan(1);
        expect(new Set(busy.answers)).toEqual(new Set(["busy"]));
        expect(store.entries).toEqual([]);
        // The run was created before the switch; the next opener switches it.
        expect(await pragma(fx, location, "journal_mode")).toBe("delete");
        const lease = await runStore(fx).open(location, { create: CREATE });
        await lease.release();
        expect(await pragma(fx, location, "journal_mode")).toBe("wal");
      },
    );
  });
}
