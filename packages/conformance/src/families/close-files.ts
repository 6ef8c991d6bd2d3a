/**
 * `close()` leaves complete files (issue 16): once `await store.close()`
 * resolves, the database file alone holds every committed transaction — a
 * copy of it without its `-wal` opens with all of them — and the `-wal`
 * holds nothing more. Where the driver really closes its handle on close
 * (capabilities.closeRemovesSideFiles), no `-wal` or `-shm` is left at all.
 */
import { copyFile, readdir, stat } from "node:fs/promises";
import { basename, join } from "node:path";
import { RunStore } from "@runledger/core";
import { expect, it } from "vitest";
import type { Fixtures } from "../fixtures.js";
import { CREATE, runStore } from "./run-fixtures.js";

const TRANSACTIONS = 20;
/** Enough per transaction that the WAL holds pages of every one of them. */
const FILE_BYTES = 64 * 1024;

async function sizeOf(path: string): Promise<number | undefined> {
  try {
    return (await stat(path)).size;
  } catch {
    return undefined;
  }
}

export function describeCloseFiles(fx: Fixtures): void {
  fx.needs("files", "local").describe("close leaves complete files", () => {
    /** A run written by 20 transactions (an apply and its event each), then its store closed. */
    const writtenAndClosed = async () => {
      const location = join(await fx.scratchDirectory(), "run.sqlite");
      const store = new RunStore({ driver: fx.driver() });
      const lease = await store.open(location, { create: CREATE });
      for (let n = 1; n <= TRANSACTIONS; n++) {
        await lease.transact((tx) =>
          tx.workspace.apply({ put: { [`f${n}.bin`]: new Uint8Array(FILE_BYTES).fill(n) } }),
        );
      }
      await lease.release();
      await store.close();
      return location;
    };

    it(`the database file alone holds all ${TRANSACTIONS} transactions once close resolves`, async () => {
      const location = await writtenAndClosed();
      const copy = join(await fx.scratchDirectory(), "copy.sqlite");
      await copyFile(location, copy);
      const lease = await runStore(fx).open(copy, { readOnly: true });
      const { events, file } = await lease.read(async (r) => ({
        events: await r.journal.list(),
        file: await r.workspace.read(`f${TRANSACTIONS}.bin`),
      }));
      expect(events.map((e) => e.sequence)).toEqual(
        Array.from({ length: TRANSACTIONS }, (_, i) => i + 1),
      );
      expect(file).toEqual(new Uint8Array(FILE_BYTES).fill(TRANSACTIONS));
      expect((await lease.verify()).ok).toBe(true);
      await lease.release();
    });

    it("leaves a -wal that holds nothing once close resolves", async () => {
      const location = await writtenAndClosed();
      expect(await sizeOf(`${location}-wal`)).toBeOneOf([undefined, 0]);
    });

    fx.needs("closeRemovesSideFiles").it("leaves no -wal or -shm once close resolves", async () => {
      const location = await writtenAndClosed();
      const name = basename(location);
      const listing = (await readdir(join(location, ".."))).filter((entry) =>
        entry.startsWith(name),
      );
      expect(listing).toEqual([name]);
    });
  });
}
