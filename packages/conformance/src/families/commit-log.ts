/**
 * Commit-log family (docs/commit-log.md): the log is its own SQLite database, exactly
 * version 1 on every adapter and recognized as strictly as a run (every
 * refusal leaves the file as found); a unit of work commits one commit per
 * partition per batch, at most 10,000 ops each, data partitions first and run
 * partitions last; expectations of each kind hold or refuse their whole
 * partition while the others commit; a run partition is held back when a
 * data partition of its unit was refused (the never-name-refused-data rule);
 * committing again after a failure at any point lands only what had not
 * landed; a lost chunk is stored again from the content source; staging
 * spills to the log, and an abandoned unit leaves nothing.
 */
import { copyFile, writeFile } from "node:fs/promises";
import { APPLICATION_ID, RunStore } from "@runledger/core";
import {
  COMMIT_LOG_APPLICATION_ID,
  COMMIT_LOG_SCHEMA_V1,
  COMMIT_LOG_SCHEMA_V1_DIGEST,
  type CommitResult,
  type ContentSource,
  put,
  READ_MODEL_APPLICATION_ID,
  READ_MODEL_SCHEMA_V1,
  READ_MODEL_SCHEMA_V1_DIGEST,
  renameDefinition,
  tombstone,
  typedChange,
} from "@runledger/core/commit-log";
import { manifestDigest } from "@runledger/core/engine";
import { describe, expect, it } from "vitest";
import { FaultInjector } from "../faults.js";
import { type Fixtures, failureOf, sha256Hex, ViewSlicing } from "../fixtures.js";
import {
  AUTO_1,
  commitShape,
  liveKeys,
  logStore,
  MODEL_A,
  modelStore,
  newLog,
  newModel,
  onLog,
  putOp,
  RUN_1,
  RUN_2,
  runLogPeer,
  sha,
  stageUnit,
  type UnitSpec,
  VAULT_A,
  WORKFLOW_A,
  WORKFLOW_B,
} from "./commit-log-fixtures.js";
import { CREATE, fingerprint, liveSchema, raw, runPeer, schemaDigest } from "./run-fixtures.js";

async function drain<T>(items: AsyncIterable<T>): Promise<T[]> {
  const out: T[] = [];
  for await (const item of items) out.push(item);
  return out;
}

const digestBytes = (hex: string) => new Uint8Array(Buffer.from(hex, "hex"));

/** A unit whose seven batches all land: two data partitions of two batches, one of one; runs last. */
const SEVEN_BATCHES: UnitSpec = [
  { intent: "run.create", partition: RUN_1, ops: [putOp("run.json", "r1", "absent")] },
  { intent: "definition.create", partition: MODEL_A, ops: [putOp("definition.yaml", "v1")] },
  {
    intent: "run-snapshot.save",
    partition: RUN_1,
    ops: [putOp("snap/1", "s1"), putOp("snap/2", "s2")],
  },
  {
    intent: "definition.edit",
    partition: MODEL_A,
    ops: [putOp("definition.yaml", "v2", sha("v1"))],
  },
  { intent: "definition.create", partition: VAULT_A, ops: [putOp("vault.yaml", "local")] },
  { intent: "auto-definition.save", partition: AUTO_1, ops: [putOp("a", "1"), putOp("b", "2")] },
  { intent: "run.create", partition: RUN_2, ops: [putOp("run.json", "r2")] },
];

export function describeCommitLog(fx: Fixtures): void {
  describe("commit log", () => {
    describeRecognition(fx);
    describeExpectations(fx);
    describeBatches(fx);
    describeRefusals(fx);
    describeRetries(fx);
    describeChunks(fx);
    describeStaging(fx);
  });
}

function describeRecognition(fx: Fixtures): void {
  describe("schema and recognition", () => {
    it("creates exactly version 1 of the commit log and of the read model on every adapter", async () => {
      const { log, location } = await newLog(fx);
      await log.release();
      const live = await liveSchema(fx, location);
      // A server refuses the header id: there the identity table names the format.
      expect(live.applicationId).toBe(fx.remote ? 0 : COMMIT_LOG_APPLICATION_ID);
      expect(live.userVersion).toBe(1);
      expect(live.objects).toEqual(COMMIT_LOG_SCHEMA_V1.objects.map((object) => ({ ...object })));
      // The digest covers the header id, which only a local file holds.
      const header = (id: number) => (fx.remote ? { applicationId: id } : {});
      expect(schemaDigest({ ...live, ...header(COMMIT_LOG_APPLICATION_ID) })).toBe(
        COMMIT_LOG_SCHEMA_V1_DIGEST,
      );
      expect(manifestDigest(COMMIT_LOG_SCHEMA_V1)).toBe(COMMIT_LOG_SCHEMA_V1_DIGEST);

      const { model, location: modelLocation } = await newModel(fx);
      await model.release();
      const modelLive = await liveSchema(fx, modelLocation);
      expect(modelLive.applicationId).toBe(fx.remote ? 0 : READ_MODEL_APPLICATION_ID);
      expect(modelLive.objects).toEqual(READ_MODEL_SCHEMA_V1.objects.map((o) => ({ ...o })));
      expect(schemaDigest({ ...modelLive, ...header(READ_MODEL_APPLICATION_ID) })).toBe(
        READ_MODEL_SCHEMA_V1_DIGEST,
      );
      expect(
        new Set([APPLICATION_ID, COMMIT_LOG_APPLICATION_ID, READ_MODEL_APPLICATION_ID]).size,
      ).toBe(3);
    });

    it("opens a log it created again, with the same log id, and refuses to create nothing", async () => {
      const { store, log, location } = await newLog(fx);
      const id = log.logId;
      await log.release();
      const again = await store.open(location);
      expect(again.logId).toBe(id);
      await again.release();
      const missing = await failureOf(() => logStore(fx).open(fx.location()));
      // Nothing there is not_found on every backend (a server: no such namespace).
      expect(missing.code).toBe("not_found");
    });

    fx.needs("files").it(
      "refuses every file that is not exactly a version-1 log and leaves it as found",
      async () => {
        // Fixtures are made in a child process with the subject's own driver when it has
        // one, so no connection of this process has touched them (some drivers keep a
        // closed file's lock until collected), then switched to rollback-journal mode
        // so each is one self-contained file.
        const child = fx.has("childProcesses") ? fx.subject.child : undefined;
        let base: string | undefined;
        const made = async (statements: string[]) => {
          if (base === undefined) {
            base = fx.location();
            if (child !== undefined) {
              await runLogPeer(child, { log: base, write: [] });
            } else {
              const store = logStore(fx);
              await (await store.open(base, { create: true })).release();
              await store.close();
            }
            await raw(fx, base, ["PRAGMA journal_mode = DELETE"]);
          }
          const location = fx.location();
          await copyFile(base, location);
          if (statements.length > 0) await raw(fx, location, statements);
          return location;
        };
        const runFile = async () => {
          const location = fx.location();
          if (child !== undefined) {
            await runPeer(child, { location, create: CREATE });
          } else {
            const store = new RunStore({ driver: fx.driver() });
            await (await store.open(location, { create: CREATE })).release();
            await store.close();
          }
          await raw(fx, location, ["PRAGMA journal_mode = DELETE"]);
          return location;
        };
        const cases: [string, () => Promise<string>, string][] = [
          ["a run database", runFile, "foreign_database"],
          [
            "garbage",
            async () => {
              const location = fx.location();
              await writeFile(location, Buffer.alloc(8192, 0x5a));
              return location;
            },
            "not_a_database",
          ],
          [
            "our id, user_version 0",
            async () => {
              const location = fx.location();
              await raw(
                fx,
                location,
                [
                  `PRAGMA application_id = ${COMMIT_LOG_APPLICATION_ID}`,
                  "CREATE TABLE log_info (x)",
                ],
                { create: true },
              );
              return location;
            },
            "partial_initialization",
          ],
          ["a newer version", () => made(["PRAGMA user_version = 2"]), "unsupported_version"],
          [
            "an extra index",
            () => made(["CREATE INDEX extra ON live_key (digest)"]),
            "schema_mismatch",
          ],
          [
            "a missing trigger",
            () => made(["DROP TRIGGER log_commit_immutable"]),
            "schema_mismatch",
          ],
          ["no log_info row", () => made(["DELETE FROM log_info"]), "corrupt"],
        ];
        for (const [what, build, code] of cases) {
          const location = await build();
          const before = await fingerprint(location);
          const error = await failureOf(() => logStore(fx).open(location, { create: true }));
          expect(error.code, what).toBe(code);
          expect(await fingerprint(location), `${what} left as found`).toEqual(before);
        }
        // A log is not a read model, and the reverse.
        const log = await made([]);
        const before = await fingerprint(log);
        expect((await failureOf(() => modelStore(fx).open(log, { create: true }))).code).toBe(
          "foreign_database",
        );
        expect(await fingerprint(log)).toEqual(before);
      },
    );
  });
}

function describeExpectations(fx: Fixtures): void {
  describe("expectations", () => {
    /** Each case runs on its own partition, where `held` holds "A" and `gone` holds nothing. */
    const cases: {
      name: string;
      op: "put" | "tombstone";
      key: "held" | "gone";
      expect: "absent" | "present" | "A" | "B";
      holds: boolean;
    }[] = [];
    for (const op of ["put", "tombstone"] as const) {
      cases.push(
        { name: `${op} absent on a new key`, op, key: "gone", expect: "absent", holds: true },
        { name: `${op} absent on a live key`, op, key: "held", expect: "absent", holds: false },
        { name: `${op} present on a live key`, op, key: "held", expect: "present", holds: true },
        {
          name: `${op} present on a missing key`,
          op,
          key: "gone",
          expect: "present",
          holds: false,
        },
        { name: `${op} sha256 matching`, op, key: "held", expect: "A", holds: true },
        { name: `${op} sha256 of other content`, op, key: "held", expect: "B", holds: false },
        { name: `${op} sha256 on a missing key`, op, key: "gone", expect: "A", holds: false },
      );
    }

    it("holds or refuses each kind (absent, present, { sha256 }) on put and tombstone", async () => {
      const { log } = await newLog(fx);
      const partitions = cases.map((_, i) => `definition--expect-${i}`);
      const seed = await log.begin();
      for (const partition of partitions) {
        await seed.stage({ intent: "auto-definition.save", partition, ops: [put("held", "A")] });
      }
      expect((await seed.commit()).refused).toEqual([]);

      const unit = await log.begin();
      for (const [i, c] of cases.entries()) {
        const expectation = c.expect === "A" ? sha("A") : c.expect === "B" ? sha("B") : c.expect;
        const op =
          c.op === "put"
            ? put(c.key, "new", { expect: expectation })
            : tombstone(c.key, { expect: expectation });
        await unit.stage({ intent: "auto-definition.save", partition: partitions[i]!, ops: [op] });
      }
      const result = await unit.commit();
      const refused = new Map(result.refused.map((r) => [r.partition, r]));
      const committed = new Set(result.committed.map((c) => c.partition));
      for (const [i, c] of cases.entries()) {
        const partition = partitions[i]!;
        expect(committed.has(partition), c.name).toBe(c.holds);
        const live = await log.read((r) => r.liveKey(partition, c.key));
        if (c.holds) {
          expect(live?.sha256, c.name).toBe(c.op === "put" ? sha256Hex("new") : undefined);
          continue;
        }
        const refusal = refused.get(partition);
        expect(refusal?.reason, c.name).toBe("expectation_failed");
        expect(refusal?.failures, c.name).toEqual([
          {
            key: c.key,
            expected:
              c.expect === "A"
                ? `sha256:${sha256Hex("A")}`
                : c.expect === "B"
                  ? `sha256:${sha256Hex("B")}`
                  : c.expect,
            found: c.key === "held" ? `sha256:${sha256Hex("A")}` : "absent",
          },
        ]);
        // Refused: the partition is exactly as before.
        expect(live?.sha256, c.name).toBe(c.key === "held" ? sha256Hex("A") : undefined);
      }
    });

    it("keeps a copy of staged content: changing the caller's array after staging changes nothing committed", async () => {
      const { log } = await newLog(fx);
      const given = ViewSlicing.from(new TextEncoder().encode("staged as it was"));
      const unit = await log.begin();
      await unit.stage({
        intent: "auto-definition.save",
        partition: AUTO_1,
        ops: [put("k", given)],
      });
      given.fill(0x21);
      expect((await unit.commit()).refused).toEqual([]);
      const live = await log.read((r) => r.liveKey(AUTO_1, "k"));
      expect(live?.sha256).toBe(sha256Hex("staged as it was"));
      const stored = await log.read((r) => r.content(sha256Hex("staged as it was")));
      expect(new TextDecoder().decode(stored)).toBe("staged as it was");
    });

    it("checks each op against the ops before it in the same unit, then the live index", async () => {
      const { log } = await newLog(fx);
      const unit = await log.begin();
      await unit.stage(
        typedChange("definition.create", { kind: "model", name: "m" }, [
          put("k", "one", { expect: "absent" }),
          put("k", "two", { expect: { sha256: sha256Hex("one") } }),
          tombstone("k", { expect: "present" }),
          put("k", "three", { expect: "absent" }),
        ]),
      );
      await unit.stage(
        typedChange("definition.edit", { kind: "model", name: "m" }, [
          put("k", "four", { expect: { sha256: sha256Hex("three") } }),
        ]),
      );
      const result = await unit.commit();
      expect(result.refused).toEqual([]);
      expect(result.committed[0]?.commits.map((c) => [c.intent, c.opCount])).toEqual([
        ["definition.create", 4],
        ["definition.edit", 1],
      ]);
      expect((await log.read((r) => r.liveKey("config--model--m", "k")))?.sha256).toBe(
        sha256Hex("four"),
      );
    });
  });
}

function describeBatches(fx: Fixtures): void {
  describe("batches", () => {
    it("splits one partition's change at 10,000 ops: 9,999 / 10,000 / 10,001 / 20,001", async () => {
      const { log } = await newLog(fx);
      const sizes: [number, number[]][] = [
        [9_999, [9_999]],
        [10_000, [10_000]],
        [10_001, [10_000, 1]],
        [20_001, [10_000, 10_000, 1]],
      ];
      for (const [n, expected] of sizes) {
        const partition = `definition--batch-${n}`;
        const unit = await log.begin();
        const ops = Array.from({ length: n }, (_, i) => put(`k${i}`, `v${i % 13}`));
        await unit.stage({ intent: "auto-definition.save", partition, ops });
        const result = await unit.commit();
        const commits = result.committed[0]?.commits ?? [];
        expect(result.committed.map((c) => c.partition)).toEqual([partition]);
        expect(
          commits.map((c) => c.opCount),
          `${n} ops`,
        ).toEqual(expected);
        expect(commits.map((c) => c.sequence)).toEqual(expected.map((_, i) => i + 1));
        const count = await onLog(log, "SELECT count(*) AS n FROM live_key WHERE partition = ?", [
          partition,
        ]);
        expect(Number(count.rows[0]?.n)).toBe(n);
        // The last key landed in the last batch, in order.
        const last = await log.read((r) => r.liveKey(partition, `k${n - 1}`));
        expect(last?.sequence).toBe(expected.length);
      }
    });

    it("packs consecutive same-intent changes of a partition into one commit while they fit", async () => {
      const { log } = await newLog(fx);
      const unit = await log.begin();
      const change = (from: number, n: number) =>
        typedChange(
          "run-snapshot.save",
          { workflowId: "wf", runId: "r" },
          Array.from({ length: n }, (_, i) => put(`s${from + i}`, "x")),
        );
      await unit.stage(change(0, 3_000));
      await unit.stage(change(3_000, 3_000));
      await unit.stage(change(6_000, 3_000));
      await unit.stage(change(9_000, 3_000)); // does not fit: a new batch
      await unit.stage(
        typedChange("run.update", { workflowId: "wf", runId: "r" }, [put("run", "1")]),
      );
      await unit.stage(change(12_000, 10));
      const result = await unit.commit();
      expect(result.committed[0]?.commits.map((c) => [c.intent, c.opCount])).toEqual([
        ["run-snapshot.save", 9_000],
        ["run-snapshot.save", 3_000],
        ["run.update", 1],
        ["run-snapshot.save", 10],
      ]);
    });

    it("commits data partitions first, in staging order, and run partitions last", async () => {
      const { log } = await newLog(fx);
      const unit = await stageUnit(log, SEVEN_BATCHES);
      const result = await unit.commit();
      expect(result.refused).toEqual([]);
      const order = (await commitShape(log)).map((c) => [c.partition, c.intent]);
      expect(order).toEqual([
        [MODEL_A, "definition.create"],
        [MODEL_A, "definition.edit"],
        [VAULT_A, "definition.create"],
        [AUTO_1, "auto-definition.save"],
        [RUN_1, "run.create"],
        [RUN_1, "run-snapshot.save"],
        [RUN_2, "run.create"],
      ]);
      expect(result.committed.map((c) => c.partition)).toEqual([
        MODEL_A,
        VAULT_A,
        AUTO_1,
        RUN_1,
        RUN_2,
      ]);
      const ids = result.committed.flatMap((c) => c.commits.map((commit) => commit.commitId));
      expect(ids).toEqual([1, 2, 3, 4, 5, 6, 7]);
    });
  });
}

function describeRefusals(fx: Fixtures): void {
  describe("refusals", () => {
    it("refuses a failing partition whole while the other partitions commit", async () => {
      const { log } = await newLog(fx);
      await (
        await stageUnit(log, [
          {
            intent: "definition.create",
            partition: WORKFLOW_A,
            ops: [putOp("definition.yaml", "w1")],
          },
        ])
      ).commit();
      const big = Array.from({ length: 10_001 }, (_, i) => putOp(`k${i}`, "v"));
      // The one failing expectation is the last op of the partition's second batch.
      big.push(putOp("definition.yaml", "w2", "absent"));
      const unit = await stageUnit(log, [
        { intent: "definition.create", partition: MODEL_A, ops: [putOp("definition.yaml", "m")] },
        { intent: "definition.edit", partition: WORKFLOW_A, ops: big },
        { intent: "definition.create", partition: VAULT_A, ops: [putOp("vault.yaml", "v")] },
      ]);
      const result = await unit.commit();
      expect(result.committed.map((c) => c.partition)).toEqual([MODEL_A, VAULT_A]);
      expect(result.refused).toEqual([
        {
          partition: WORKFLOW_A,
          reason: "expectation_failed",
          batches: [1, 2],
          failures: [
            { key: "definition.yaml", expected: "absent", found: `sha256:${sha256Hex("w1")}` },
          ],
          failureCount: 1,
          heldBecause: [],
        },
      ]);
      // Nothing of the refused partition landed, not even its first batch.
      expect(await log.read((r) => r.liveKeys(WORKFLOW_A))).toEqual([
        { partition: WORKFLOW_A, key: "definition.yaml", sha256: sha256Hex("w1"), sequence: 1 },
      ]);
      expect((await commitShape(log)).filter((c) => c.partition === WORKFLOW_A)).toHaveLength(1);
    });

    it("never lets a run record land when a data partition of its unit was refused (hold back)", async () => {
      const { log } = await newLog(fx);
      await (
        await stageUnit(log, [
          { intent: "run.create", partition: RUN_1, ops: [putOp("run.json", '{"data":[]}')] },
          { intent: "definition.create", partition: MODEL_A, ops: [putOp("data/v1", "one")] },
        ])
      ).commit();
      // The run record names data/v2, whose partition is refused (an expect-failed put).
      const unit = await stageUnit(log, [
        {
          intent: "run.update",
          partition: RUN_1,
          ops: [putOp("run.json", '{"data":["data/v2"]}')],
        },
        { intent: "run.create", partition: RUN_2, ops: [putOp("run.json", "{}")] },
        { intent: "definition.create", partition: VAULT_A, ops: [putOp("vault.yaml", "ok")] },
        {
          intent: "definition.edit",
          partition: MODEL_A,
          ops: [putOp("data/v2", "two", "present")],
        },
      ]);
      const result = await unit.commit();
      expect(result.committed.map((c) => c.partition)).toEqual([VAULT_A]);
      expect(result.refused.map((r) => [r.partition, r.reason, r.heldBecause])).toEqual([
        [MODEL_A, "expectation_failed", []],
        [RUN_1, "held_back", [MODEL_A]],
        [RUN_2, "held_back", [MODEL_A]],
      ]);
      // The run record is still the version that names only landed data.
      expect((await log.read((r) => r.liveKey(RUN_1, "run.json")))?.sha256).toBe(
        sha256Hex('{"data":[]}'),
      );
      expect(await log.read((r) => r.liveKey(MODEL_A, "data/v2"))).toBeUndefined();
      expect(await log.read((r) => r.liveKeys(RUN_2))).toEqual([]);
      // Committing again answers the same: held is a decision, not a pending state.
      expect(await unit.commit()).toEqual(result);
      const resumed = await (await log.resume(unit.txnId)).commit();
      expect({ ...resumed, chunks: null }).toEqual({ ...result, chunks: null });

      // When the data lands, the run lands after it.
      const next = await stageUnit(log, [
        {
          intent: "run.update",
          partition: RUN_1,
          ops: [putOp("run.json", '{"data":["data/v2"]}')],
        },
        { intent: "definition.edit", partition: MODEL_A, ops: [putOp("data/v2", "two", "absent")] },
      ]);
      const landed = await next.commit();
      expect(landed.refused).toEqual([]);
      const [data, run] = landed.committed;
      expect(data?.partition).toBe(MODEL_A);
      expect(run?.partition).toBe(RUN_1);
      expect(run!.commits[0]!.commitId).toBeGreaterThan(data!.commits[0]!.commitId);
    });
  });
}

function describeRetries(fx: Fixtures): void {
  describe("retries keep the txn id", () => {
    it("lands only what had not landed when the k-th partition commit fails, for every k", async () => {
      const baseline = await newLog(fx);
      const expected = await (await stageUnit(baseline.log, SEVEN_BATCHES)).commit();
      const shape = await commitShape(baseline.log);
      const keys = await liveKeys(baseline.log);
      expect(shape).toHaveLength(7);

      for (let k = 1; k <= 7; k++) {
        for (const how of ["same unit", "new process"] as const) {
          const faults = new FaultInjector(fx.driver());
          const first = await newLog(fx, { driver: faults.driver });
          const unit = await stageUnit(first.log, SEVEN_BATCHES, `txn-${k}`);
          faults.arm({ match: /^INSERT INTO log_commit /, nth: k });
          const error = await failureOf(() => unit.commit());
          expect(error.details?.injected, `k=${k}`).toBe(true);
          faults.disarm();
          expect(await commitShape(first.log), `k=${k}: the first k-1 landed`).toEqual(
            shape.slice(0, k - 1),
          );
          let result: CommitResult;
          let log = first.log;
          if (how === "same unit") {
            result = await unit.commit();
          } else {
            await first.log.release();
            await first.store.close();
            log = await logStore(fx).open(first.location);
            expect(
              (await log.read((r) => r.pendingUnits())).map((u) => [u.txnId, u.state]),
            ).toEqual([[`txn-${k}`, "sealed"]]);
            result = await (await log.resume(`txn-${k}`)).commit();
          }
          expect(await commitShape(log), `k=${k} ${how}`).toEqual(shape);
          expect(await liveKeys(log)).toEqual(keys);
          expect(result.committed.map((c) => c.partition)).toEqual(
            expected.committed.map((c) => c.partition),
          );
          expect(result.refused).toEqual([]);
          const all = await log.read((r) => r.commits({ txnId: `txn-${k}` }));
          expect(all).toHaveLength(7);
          expect(await log.read((r) => r.pendingUnits())).toEqual([]);
        }
      }
    });

    it("lands everything exactly once when any COMMIT of the unit's transactions fails", async () => {
      const baseline = await newLog(fx);
      await (await stageUnit(baseline.log, SEVEN_BATCHES)).commit();
      const shape = await commitShape(baseline.log);
      // The seal, seven batches, and the cleanup: nine transactions.
      for (let k = 1; k <= 9; k++) {
        const faults = new FaultInjector(fx.driver());
        const { log } = await newLog(fx, { driver: faults.driver });
        const unit = await stageUnit(log, SEVEN_BATCHES);
        faults.arm({ match: /^COMMIT$/, nth: k });
        await failureOf(() => unit.commit());
        faults.disarm();
        const result = await unit.commit();
        expect(result.refused, `k=${k}`).toEqual([]);
        expect(await commitShape(log), `k=${k}`).toEqual(shape);
        expect(await unit.commit()).toEqual(result);
      }
    });
  });
}

function describeChunks(fx: Fixtures): void {
  describe("chunks", () => {
    const recording = (texts: string[]): ContentSource & { asked: string[] } => {
      const byDigest = new Map(
        texts.map((text) => [sha256Hex(text), new TextEncoder().encode(text)]),
      );
      const asked: string[] = [];
      return {
        asked,
        async read(digest) {
          asked.push(digest);
          return byDigest.get(digest);
        },
      };
    };

    it("stores a deleted chunk again from the content source, and never wrong bytes", async () => {
      const { log } = await newLog(fx);
      const result = await (
        await stageUnit(log, [
          {
            intent: "definition.create",
            partition: MODEL_A,
            ops: [putOp("a", "alpha"), putOp("b", "beta"), putOp("c", "alpha")],
          },
        ])
      ).commit();
      expect(result.chunks).toEqual({ checked: 3, restored: [], unavailable: [] });
      const alpha = sha256Hex("alpha");
      await onLog(log, "DELETE FROM chunk WHERE digest = ?", [digestBytes(alpha)]);
      expect(await log.read((r) => r.content(alpha))).toBeUndefined();

      // A source with wrong bytes for the digest: nothing is stored.
      const liar: ContentSource = { read: async () => new TextEncoder().encode("not alpha") };
      expect(await log.checkChunks({ source: liar })).toEqual({
        checked: 3,
        restored: [],
        unavailable: [alpha],
      });
      const source = recording(["alpha", "beta"]);
      expect(await log.checkChunks({ source })).toEqual({
        checked: 3,
        restored: [alpha],
        unavailable: [],
      });
      expect(source.asked).toEqual([alpha]);
      expect(Buffer.from((await log.read((r) => r.content(alpha)))!).toString()).toBe("alpha");
    });

    it("re-stores, after a retried commit, a chunk lost between its batches", async () => {
      const faults = new FaultInjector(fx.driver());
      const { log } = await newLog(fx, { driver: faults.driver });
      const source = recording(["first"]);
      const unit = await log.begin({ contentSource: source });
      await unit.stage(
        typedChange("definition.create", { kind: "model", name: "a" }, [put("k", "first")]),
      );
      await unit.stage(
        typedChange("definition.create", { kind: "model", name: "b" }, [put("k", "second")]),
      );
      faults.arm({ match: /^INSERT INTO log_commit /, nth: 2 });
      await failureOf(() => unit.commit());
      faults.disarm();
      await onLog(log, "DELETE FROM chunk WHERE digest = ?", [digestBytes(sha256Hex("first"))]);
      const result = await unit.commit();
      expect(result.chunks).toEqual({
        checked: 2,
        restored: [sha256Hex("first")],
        unavailable: [],
      });
      expect(source.asked).toEqual([sha256Hex("first")]);
    });
  });
}

function describeStaging(fx: Fixtures): void {
  describe("staging", () => {
    it("spills staged ops to the log's staging area, keeping a bounded buffer", async () => {
      const { log } = await newLog(fx);
      const unit = await log.begin({ spillOps: 100 });
      let most = 0;
      for (let i = 0; i < 1_000; i++) {
        await unit.stage(
          typedChange("run-snapshot.save", { workflowId: "wf", runId: "r" }, [
            put(`s/${i}`, `v${i}`),
          ]),
        );
        most = Math.max(most, unit.buffered);
      }
      expect(most).toBeLessThanOrEqual(100);
      const spilled = await onLog(log, "SELECT count(*) AS n FROM staged_op");
      expect(Number(spilled.rows[0]?.n)).toBeGreaterThanOrEqual(900);
      const staged = [];
      for await (const op of unit.stagedOps()) staged.push(op);
      expect(staged.map((op) => op.key)).toEqual(Array.from({ length: 1_000 }, (_, i) => `s/${i}`));
      expect(staged[0]).toEqual({
        batch: 0,
        ordinal: 0,
        partition: "run--wf--r",
        intent: "run-snapshot.save",
        op: "put",
        key: "s/0",
        sha256: sha256Hex("v0"),
        expect: null,
      });
      const result = await unit.commit();
      expect(result.committed[0]?.commits.map((c) => c.opCount)).toEqual([1_000]);
      // Done: the staged ops and contents are gone; the batch outcome stays.
      for (const table of ["staged_op", "staged_content"]) {
        const left = await onLog(log, `SELECT count(*) AS n FROM ${table}`);
        expect(Number(left.rows[0]?.n), table).toBe(0);
      }
      const none = [];
      for await (const op of unit.stagedOps()) none.push(op);
      expect(none).toEqual([]);
    });

    it("refuses a bad change at stage() and stages nothing of it", async () => {
      const { log } = await newLog(fx);
      const unit = await log.begin();
      const error = await failureOf(() =>
        unit.stage({ intent: "run.update", partition: MODEL_A, ops: [put("k", "v")] }),
      );
      expect(error.code).toBe("invalid_change");
      expect(error.details?.reason).toBe("wrong_partition");
      const unknown = await failureOf(() =>
        // biome-ignore lint/suspicious/noExplicitAny: an intent no build knows
        unit.stage({ intent: "run.explode" as any, partition: RUN_1, ops: [put("k", "v")] }),
      );
      expect(unknown.details?.reason).toBe("unknown_intent");
      const result = await unit.commit();
      expect(result.committed).toEqual([]);
      expect(await commitShape(log)).toEqual([]);
    });

    it("stages several changes in one call, all or none: a rename lands to-then-from", async () => {
      const { log } = await newLog(fx);
      await (
        await stageUnit(log, [
          {
            intent: "definition.create",
            partition: WORKFLOW_A,
            ops: [putOp("definition.yaml", "w")],
          },
        ])
      ).commit();
      const unit = await log.begin();
      const rename = renameDefinition({
        kind: "workflow",
        from: "deploy",
        to: "deploy-v2",
        put: { key: "definition.yaml", content: "w" },
      });
      const bad = { intent: "run.update" as const, partition: WORKFLOW_A, ops: [put("k", "v")] };
      expect((await failureOf(() => unit.stage([...rename, bad]))).code).toBe("invalid_change");
      expect(await drain(unit.stagedOps())).toEqual([]);
      await unit.stage(rename);
      const result = await unit.commit();
      expect(result.refused).toEqual([]);
      expect(result.committed.map((c) => [c.partition, c.commits[0]?.intent])).toEqual([
        [WORKFLOW_B, "definition.rename-to"],
        [WORKFLOW_A, "definition.rename-from"],
      ]);
      expect(await log.read((r) => r.liveKeys(WORKFLOW_A))).toEqual([]);
      expect((await log.read((r) => r.liveKey(WORKFLOW_B, "definition.yaml")))?.sha256).toBe(
        sha256Hex("w"),
      );
    });

    it("discards an abandoned unit entirely, and refuses to use it afterwards", async () => {
      const { log } = await newLog(fx);
      const unit = await log.begin({ spillOps: 10 });
      for (let i = 0; i < 50; i++) {
        await unit.stage(
          typedChange("run.update", { workflowId: "wf", runId: "r" }, [put("run", `${i}`)]),
        );
      }
      await unit.abandon();
      for (const table of ["unit", "unit_batch", "staged_op", "staged_content"]) {
        const left = await onLog(log, `SELECT count(*) AS n FROM ${table}`);
        expect(Number(left.rows[0]?.n), table).toBe(0);
      }
      expect(await commitShape(log)).toEqual([]);
      expect((await failureOf(() => unit.commit())).code).toBe("unit_closed");
      expect(
        (
          await failureOf(() =>
            unit.stage(
              typedChange("run.update", { workflowId: "wf", runId: "r" }, [put("x", "y")]),
            ),
          )
        ).code,
      ).toBe("unit_closed");
    });

    it("never commits a unit whose process stopped while it was staging", async () => {
      const { store, log, location } = await newLog(fx);
      const unit = await log.begin({ txnId: "half", spillOps: 10 });
      for (let i = 0; i < 25; i++) {
        await unit.stage(
          typedChange("run.update", { workflowId: "wf", runId: "r" }, [put("run", `${i}`)]),
        );
      }
      // The process "stops": the handle goes away without commit or abandon.
      await log.release();
      await store.close();
      const reopened = await logStore(fx).open(location);
      expect((await reopened.read((r) => r.pendingUnits())).map((u) => [u.txnId, u.state])).toEqual(
        [["half", "staging"]],
      );
      const resumed = await reopened.resume("half");
      expect(resumed.state).toBe("incomplete");
      expect((await failureOf(() => resumed.commit())).code).toBe("unit_incomplete");
      await resumed.abandon();
      expect(await reopened.read((r) => r.pendingUnits())).toEqual([]);
      expect(await commitShape(reopened)).toEqual([]);
      expect((await failureOf(() => reopened.resume("half"))).code).toBe("unit_not_found");
      await (await reopened.begin({ txnId: "used" })).commit();
      expect((await failureOf(() => reopened.begin({ txnId: "used" }))).code).toBe("unit_exists");
    });
  });
}
