/**
 * Read-model family (docs/commit-log.md): catching a read model up from a commit log
 * gives documents (bytes) and catalog rows (partition, key, digest,
 * sequence, intent) equal to the reference model of what was committed; it
 * is incremental from its cursor and idempotent — twice, or again after a
 * crash injected at any statement of it, gives the same result; it follows
 * one log only; and a log written by one adapter is caught up by the other,
 * in a child process (two SQLite libraries never share a file in one process).
 */
import { type CommitResult, put, typedChange } from "@runledger/core/commit-log";
import { describe, expect, it } from "vitest";
import { FaultInjector } from "../faults.js";
import { type Fixtures, failureOf, sha256Hex } from "../fixtures.js";
import {
  expectDigestsEqual,
  expectedModel,
  expectModelEquals,
  liveKeys,
  logStore,
  MODEL_A,
  modelContents,
  modelStore,
  newLog,
  newModel,
  onLog,
  putOp,
  runLogPeer,
  standardWorkload,
  writeUnits,
} from "./commit-log-fixtures.js";

export function describeReadModel(fx: Fixtures): void {
  describe("read model", () => {
    it("catches up documents and catalog rows equal to the reference and to the log", async () => {
      const units = standardWorkload(10_001);
      const { log } = await newLog(fx);
      const results = await writeUnits(log, units);
      for (const result of results) expect(result.refused).toEqual([]);
      const expected = expectedModel(units, results);
      const { model } = await newModel(fx);
      const caughtUp = await model.catchUp(log, { opsPerTransaction: 4_000 });
      const lastCommit = (await log.read((r) => r.info())).lastCommitId;
      expect(caughtUp.appliedCommit).toBe(lastCommit);
      expect(caughtUp.ops).toBe(units.flat().reduce((n, change) => n + change.ops.length, 0));
      await expectModelEquals(model, expected);
      // The catalog is the log's live key index, plus each key's intent.
      const { catalog } = await modelContents(model);
      expect(catalog.map(({ intent: _, ...row }) => row)).toEqual(await liveKeys(log));
    });

    it("is incremental from its cursor and idempotent", async () => {
      const units = standardWorkload();
      const { log } = await newLog(fx);
      const { model } = await newModel(fx);
      const results: CommitResult[] = [];
      results.push(...(await writeUnits(log, units.slice(0, 2))));
      const first = await model.catchUp(log);
      await expectModelEquals(model, expectedModel(units.slice(0, 2), results));
      expect(await model.catchUp(log)).toEqual({
        commits: 0,
        ops: 0,
        appliedCommit: first.appliedCommit,
      });

      results.push(...(await writeUnits(log, units.slice(2))));
      const second = await model.catchUp(log, { opsPerTransaction: 1 });
      const newCommits = results[2]!.committed.reduce((n, p) => n + p.commits.length, 0);
      expect(second.commits).toBe(newCommits);
      const expected = expectedModel(units, results);
      await expectModelEquals(model, expected);
      const again = await model.catchUp(log);
      expect(again.commits).toBe(0);
      await expectModelEquals(model, expected);

      // A model caught up from scratch holds exactly the same.
      const { model: fresh } = await newModel(fx);
      await fresh.catchUp(log);
      expect(await modelContents(fresh)).toEqual(await modelContents(model));
    });

    it("gives the same result after a crash injected at any statement of a catch-up", async () => {
      const units = standardWorkload();
      const { log } = await newLog(fx);
      const expected = expectedModel(units, await writeUnits(log, units));
      const writes = /^(INSERT|UPDATE|DELETE|COMMIT)/;
      // Count the writes of a clean catch-up in small transactions.
      const counting = new FaultInjector(fx.driver());
      const { model: probe } = await newModel(fx, { driver: counting.driver });
      counting.arm({ match: writes, nth: Number.MAX_SAFE_INTEGER });
      await probe.catchUp(log, { opsPerTransaction: 12 });
      const total = counting.counted;
      expect(total).toBeGreaterThan(10);

      for (let k = 1; k <= total; k++) {
        const faults = new FaultInjector(fx.driver());
        const { store, model, location } = await newModel(fx, { driver: faults.driver });
        faults.arm({ match: writes, nth: k });
        const error = await failureOf(() => model.catchUp(log, { opsPerTransaction: 12 }));
        expect(error.details?.injected, `k=${k}`).toBe(true);
        faults.disarm();
        let target = model;
        if (k % 2 === 0) {
          // As if the process died: reopen on a new store.
          await model.release();
          await store.close();
          target = await modelStore(fx).open(location);
        }
        const applied = (await target.read((r) => r.cursor())).appliedCommit;
        await target.catchUp(log, { opsPerTransaction: 12 });
        await expectModelEquals(target, expected);
        expect(applied, `k=${k}: the cursor never passes what was applied`).toBeLessThanOrEqual(
          (await target.read((r) => r.cursor())).appliedCommit,
        );
      }
    });

    it("follows one log only", async () => {
      const { log } = await newLog(fx);
      const { log: other } = await newLog(fx);
      await writeUnits(log, standardWorkload().slice(0, 1));
      await writeUnits(other, standardWorkload().slice(0, 1));
      const { model } = await newModel(fx);
      await model.catchUp(log);
      const before = await modelContents(model);
      const error = await failureOf(() => model.catchUp(other));
      expect(error.code).toBe("read_model_mismatch");
      expect(await modelContents(model)).toEqual(before);
      expect((await model.read((r) => r.cursor())).logId).toBe(log.logId);
    });

    it("refuses a put whose chunk the log lost, and catches up once it is stored again", async () => {
      const { log } = await newLog(fx);
      const unit = await log.begin();
      await unit.stage(
        typedChange("definition.create", { kind: "model", name: "alpha" }, [
          put("a", "x"),
          put("b", "lost"),
        ]),
      );
      await unit.commit();
      await onLog(log, "DELETE FROM chunk WHERE digest = ?", [
        new Uint8Array(Buffer.from(sha256Hex("lost"), "hex")),
      ]);
      const { model } = await newModel(fx);
      const error = await failureOf(() => model.catchUp(log));
      expect(error.code).toBe("chunk_missing");
      expect(error.details?.sha256).toBe(sha256Hex("lost"));
      expect((await modelContents(model)).catalog).toEqual([]);
      const report = await log.checkChunks({
        source: { read: async () => new TextEncoder().encode("lost") },
      });
      expect(report.restored).toEqual([sha256Hex("lost")]);
      await model.catchUp(log);
      expect(Buffer.from((await model.read((r) => r.document(MODEL_A, "b")))!).toString()).toBe(
        "lost",
      );
    });
    for (const peer of fx.peers) {
      fx.needs("files", "peers").it(
        `has a log written here caught up by ${peer.name} in a child process, and the reverse`,
        async () => {
          const units = standardWorkload();
          // Written here, caught up there.
          const { store, log, location } = await newLog(fx);
          const expected = expectedModel(units, await writeUnits(log, units));
          await log.release();
          await store.close();
          const modelLocation = fx.location();
          const there = await runLogPeer(peer, { log: location, readModel: modelLocation });
          expect(there.driver).not.toBe(fx.driver().name);
          expect(there.model).not.toBeNull();
          expectDigestsEqual(there.model!, expected);
          // The read model the peer wrote opens here, holding the same.
          const model = await modelStore(fx).open(modelLocation);
          await expectModelEquals(model, expected);
          const reopened = await logStore(fx).open(location);
          expect((await model.catchUp(reopened)).commits).toBe(0);

          // Written there, caught up here.
          const peerLog = fx.location();
          const written = await runLogPeer(peer, {
            log: peerLog,
            write: [
              ...units,
              [{ intent: "definition.edit", partition: MODEL_A, ops: [putOp("late", "1")] }],
            ],
          });
          const peerExpected = expectedModel(
            [
              ...units,
              [{ intent: "definition.edit", partition: MODEL_A, ops: [putOp("late", "1")] }],
            ],
            written.results,
          );
          const theirs = await logStore(fx).open(peerLog);
          expect(theirs.logId).toBe(written.logId);
          const { model: mine } = await newModel(fx);
          await mine.catchUp(theirs);
          await expectModelEquals(mine, peerExpected);
        },
      );
    }
  });
}
