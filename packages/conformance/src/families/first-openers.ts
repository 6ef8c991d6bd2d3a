/**
 * Concurrent first openers (docs/contracts.md): several processes open the
 * same new path with `create` at the same moment. Exactly one creates the
 * run; every other one opens that run — waiting on the creator's lock and
 * retrying the switch to WAL while another opener keeps it busy — and none
 * fails, creates a second run or sees a half-made one. Round after round, on
 * a new path each time.
 */
import { join } from "node:path";
import { expect, it } from "vitest";
import type { FirstOpenerMessage, FirstOpenerRequest } from "../child/first-opener-protocol.js";
import { ChildProcess, type ChildScript, type Fixtures, subjectChild } from "../fixtures.js";
import { CREATE, pragma, runStore } from "./run-fixtures.js";

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
}
