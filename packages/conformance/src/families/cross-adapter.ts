/**
 * Cross-adapter family (docs/file-format.md): a run file is a run file, whichever
 * adapter wrote it. A run created here opens, appends and verifies in every
 * peer adapter, and a run a peer created does the same here. The peer always
 * runs in a child process of its own: two SQLite libraries must never share
 * one file inside one process. And with the clock and ids injected, a fresh
 * run file is byte for byte the same on both adapters, except the SQLite
 * version stamp in header bytes 92–99.
 */
import { readFile } from "node:fs/promises";
import { join } from "node:path";
import { SCHEMA_V1_DIGEST } from "@runledger/core";
import { describe, expect } from "vitest";
import type { PeerAppend } from "../child/run-peer-protocol.js";
import type { Fixtures } from "../fixtures.js";
import {
  CREATE,
  firstRow,
  liveSchema,
  openRun,
  runPeer,
  runStore,
  schemaDigest,
} from "./run-fixtures.js";

/** Header bytes 92–99: version-valid-for number and SQLITE_VERSION_NUMBER of the last writer. */
const VERSION_STAMP = { from: 92, to: 99 } as const;

export function describeCrossAdapter(fx: Fixtures): void {
  const { it } = fx.needs("files", "peers");
  describe("cross-adapter files", () => {
    for (const peer of fx.peers) {
      it(`opens, appends to and verifies a run created here in ${peer.name}`, async () => {
        const location = fx.location();
        const lease = await openRun(fx, location);
        const mine = await lease.transact(async (tx) => [
          await tx.journal.append({ by: fx.subject.name, n: 1 }),
          await tx.journal.append({ by: fx.subject.name, n: 2 }, { key: "second" }),
        ]);
        await lease.release();

        const report = await runPeer(peer, {
          location,
          create: CREATE,
          appends: [
            { record: { by: peer.name, n: 3 } },
            // The key written here is found there: the first event comes back.
            { record: { by: fx.subject.name, n: 2 }, key: "second" },
          ],
          verify: true,
        });
        expect(report.run).toMatchObject({
          workflowId: CREATE.workflowId,
          runId: CREATE.runId,
          definition: CREATE.definition,
          status: "running",
        });
        expect(report.appended[0]?.sequence).toBe(3);
        expect(report.appended[1]).toEqual(mine[1]);
        expect(report.events.map((e) => [e.sequence, e.eventId])).toEqual([
          [1, mine[0]!.eventId],
          [2, mine[1]!.eventId],
          [3, report.appended[0]!.eventId],
        ]);
        expect(report.verify).toEqual({ ok: true, problems: [], events: 3 });

        // And back here: the peer's event is read, and the journal goes on without a gap.
        const again = await runStore(fx).open(location, { create: CREATE });
        const events = await again.read((r) => r.journal.list());
        expect(events.map((e) => e.record)).toEqual([
          { by: fx.subject.name, n: 1 },
          { by: fx.subject.name, n: 2 },
          { by: peer.name, n: 3 },
        ]);
        expect((await again.transact((tx) => tx.journal.append({ n: 4 }))).sequence).toBe(4);
        expect((await again.verify()).problems).toEqual([]);
        await again.release();
      });

      it(`opens, appends to and verifies a run ${peer.name} created`, async () => {
        const location = fx.location();
        const created = await runPeer(peer, {
          location,
          create: CREATE,
          appends: [
            { record: { by: peer.name, n: 1 } },
            { record: { by: peer.name, n: 2 }, key: "second" },
          ],
          verify: true,
        });
        expect(created.verify?.ok).toBe(true);
        expect(created.appended.map((a) => a.sequence)).toEqual([1, 2]);

        expect(schemaDigest(await liveSchema(fx, location))).toBe(SCHEMA_V1_DIGEST);
        const lease = await runStore(fx).open(location, { create: CREATE });
        expect(await lease.read((r) => r.run.get())).toEqual(created.run);
        expect(await lease.read((r) => r.journal.list())).toEqual(created.events);
        const repeated = await lease.transact((tx) =>
          tx.journal.append({ by: peer.name, n: 2 }, { key: "second" }),
        );
        expect(repeated).toEqual(created.appended[1]);
        const mine = await lease.transact((tx) => tx.journal.append({ by: fx.subject.name, n: 3 }));
        expect(mine.sequence).toBe(3);
        const report = await lease.verify();
        expect(report).toMatchObject({ ok: true, problems: [], counts: { events: 3 } });
        await lease.release();

        // The peer reads what this adapter appended.
        const reread = await runPeer(peer, { location, verify: true });
        expect(reread.events.map((e) => e.record)).toEqual([
          { by: peer.name, n: 1 },
          { by: peer.name, n: 2 },
          { by: fx.subject.name, n: 3 },
        ]);
        expect(reread.verify).toEqual({ ok: true, problems: [], events: 3 });
      });

      it(`writes a fresh run byte-identical to ${peer.name}'s but for header bytes 92–99`, async () => {
        const clock = 1_700_000_000_000;
        const idPrefix = "event-";
        const appends: PeerAppend[] = [
          { record: { step: "fetch" } },
          { record: { step: "build", ok: true }, key: "build-1" },
        ];

        const mine = join(await fx.scratchDirectory(), "run.sqlite");
        let ids = 0;
        const lease = await runStore(fx, {
          clock: () => clock,
          newId: () => `${idPrefix}${++ids}`,
        }).open(mine, { create: CREATE });
        await lease.transact(async (tx) => {
          for (const { record, key } of appends) {
            await tx.journal.append(record, key === undefined ? {} : { key });
          }
        });
        await lease.release();
        const checkpoint = await firstRow(fx, mine, "PRAGMA wal_checkpoint(TRUNCATE)");
        expect(Number(Object.values(checkpoint)[0]), "checkpoint busy").toBe(0);

        const theirs = join(await fx.scratchDirectory(), "run.sqlite");
        const report = await runPeer(peer, {
          location: theirs,
          create: CREATE,
          clock,
          idPrefix,
          appends,
          checkpoint: true,
        });
        expect(report.checkpoint?.[0], "the peer's checkpoint was busy").toBe(0);

        const a = await readFile(mine);
        const b = await readFile(theirs);
        expect(a.byteLength).toBe(b.byteLength);
        const differing: number[] = [];
        for (let i = 0; i < a.byteLength; i++) if (a[i] !== b[i]) differing.push(i);
        const outside = differing.filter((i) => i < VERSION_STAMP.from || i > VERSION_STAMP.to);
        expect(outside, "bytes that differ outside the version stamp").toEqual([]);
      });
    }
  });
}
