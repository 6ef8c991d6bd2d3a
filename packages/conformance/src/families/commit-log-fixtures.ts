/**
 * Helpers shared by the commit-log and read-model families (docs/commit-log.md): stores
 * closed when their test ends, workloads written as JSON (so a peer process
 * can replay them), and the reference model — what the documents and the
 * catalog must hold — computed here from the workload and the documented
 * rules (ops keep their order; a key ends as its last op left it; the
 * sequence is that of the commit the op landed in), not from core's code.
 */
import {
  type CatalogRow,
  type CommitLog,
  CommitLogStore,
  type CommitLogStoreOptions,
  type CommitResult,
  type CommitUnit,
  checkChange,
  commitLogAccess,
  put,
  type ReadModel,
  ReadModelStore,
  type TypedChange,
  tombstone,
} from "@runledger/core/commit-log";
import type { Driver } from "@runledger/core/port";
import { expect, onTestFinished } from "vitest";
import type {
  ChangeSpec,
  DocumentDigest,
  LogPeerReport,
  LogPeerRequest,
  OpSpec,
  UnitSpec,
} from "../child/commit-log-peer-protocol.js";
import { type Fixtures, oneShot, sha256Hex } from "../fixtures.js";

export type { ChangeSpec, OpSpec, UnitSpec };

const PEER_TIMEOUT_MS = 120_000;

/** A commit-log store on the subject's driver (or the one given), closed when the test ends. */
export function logStore(
  fx: Fixtures,
  options: Partial<CommitLogStoreOptions> & { driver?: Driver } = {},
): CommitLogStore {
  const store = new CommitLogStore({ driver: fx.driver(), busyTimeoutMs: 2_000, ...options });
  onTestFinished(() => store.close());
  return store;
}

export function modelStore(fx: Fixtures, options: { driver?: Driver } = {}): ReadModelStore {
  const store = new ReadModelStore({ driver: fx.driver(), busyTimeoutMs: 2_000, ...options });
  onTestFinished(() => store.close());
  return store;
}

/** A new log at a fresh location on a store of its own. */
export async function newLog(
  fx: Fixtures,
  options: Partial<CommitLogStoreOptions> & { driver?: Driver } = {},
  location = fx.location(),
): Promise<{ store: CommitLogStore; log: CommitLog; location: string }> {
  const store = logStore(fx, options);
  const log = await store.open(location, { create: true });
  return { store, log, location };
}

export async function newModel(
  fx: Fixtures,
  options: { driver?: Driver } = {},
  location = fx.location(),
): Promise<{ store: ReadModelStore; model: ReadModel; location: string }> {
  const store = modelStore(fx, options);
  const model = await store.open(location, { create: true });
  return { store, model, location };
}

export function toChange(spec: ChangeSpec): TypedChange {
  return checkChange({
    intent: spec.intent,
    partition: spec.partition,
    ops: spec.ops.map((op) => {
      const options = op.expect === undefined ? {} : { expect: op.expect };
      return op.op === "put" ? put(op.key, op.text ?? "", options) : tombstone(op.key, options);
    }),
  });
}

/** Stages every change of `spec` in a new unit of `log`; returns the unit uncommitted. */
export async function stageUnit(
  log: CommitLog,
  spec: UnitSpec,
  txnId?: string,
): Promise<CommitUnit> {
  const unit = await log.begin(txnId === undefined ? {} : { txnId });
  for (const change of spec) await unit.stage(toChange(change));
  return unit;
}

/** Stages and commits each unit in order. */
export async function writeUnits(
  log: CommitLog,
  units: readonly UnitSpec[],
): Promise<CommitResult[]> {
  const results: CommitResult[] = [];
  for (const spec of units) results.push(await (await stageUnit(log, spec)).commit());
  return results;
}

export const putOp = (key: string, text: string, expect?: OpSpec["expect"]): OpSpec =>
  expect === undefined ? { op: "put", key, text } : { op: "put", key, text, expect };
export const tombstoneOp = (key: string, expect?: OpSpec["expect"]): OpSpec =>
  expect === undefined ? { op: "tombstone", key } : { op: "tombstone", key, expect };
export const sha = (text: string) => ({ sha256: sha256Hex(text) });

export const RUN_1 = "run--nightly-build--r1";
export const RUN_2 = "run--nightly-build--r2";
export const MODEL_A = "config--model--alpha";
export const WORKFLOW_A = "config--workflow--deploy";
export const WORKFLOW_B = "config--workflow--deploy-v2";
export const VAULT_A = "config--vault--prod";
export const AUTO_1 = "definition--auto-1";

/**
 * A workload that touches every kind of partition and op: creates, edits
 * with `{ sha256 }`, a rename across two partitions, tombstones, a key put
 * twice and put after a tombstone in one change, snapshots split over
 * batches when `snapshots` > 10,000. Every expectation holds.
 */
export function standardWorkload(snapshots = 40): UnitSpec[] {
  const runV1 = '{"status":"running","step":1}';
  const defV1 = "name: alpha\nversion: 1\n";
  const defV2 = "name: alpha\nversion: 2\n";
  const flow = "steps: [build, test]\n";
  return [
    [
      { intent: "run.create", partition: RUN_1, ops: [putOp("run.json", runV1, "absent")] },
      {
        intent: "definition.create",
        partition: MODEL_A,
        ops: [putOp("definition.yaml", defV1, "absent"), putOp("notes.md", "# notes\n")],
      },
      { intent: "definition.create", partition: WORKFLOW_A, ops: [putOp("definition.yaml", flow)] },
      {
        intent: "definition.create",
        partition: VAULT_A,
        ops: [putOp("vault.yaml", "kind: local\n")],
      },
      { intent: "auto-definition.save", partition: AUTO_1, ops: [putOp("auto.json", "{}")] },
      {
        intent: "evaluated-definition.save",
        partition: MODEL_A,
        ops: [putOp("evaluated.json", '{"v":1}')],
      },
      {
        intent: "run-snapshot.save",
        partition: RUN_1,
        ops: Array.from({ length: snapshots }, (_, i) =>
          putOp(`snapshots/${i}.json`, `{"i":${i}}`),
        ),
      },
    ],
    [
      {
        intent: "definition.edit",
        partition: MODEL_A,
        ops: [putOp("definition.yaml", defV2, sha(defV1)), tombstoneOp("notes.md", "present")],
      },
      {
        intent: "run.update",
        partition: RUN_1,
        ops: [
          putOp("run.json", '{"status":"running","step":2}', sha(runV1)),
          putOp("run.json", '{"status":"running","step":3}'),
          tombstoneOp("scratch"),
          putOp("scratch", "again", "absent"),
        ],
      },
      {
        intent: "evaluated-workflow.save",
        partition: WORKFLOW_A,
        ops: [putOp("evaluated.json", "[1,2,3]")],
      },
    ],
    [
      {
        intent: "definition.rename-to",
        partition: WORKFLOW_B,
        ops: [putOp("definition.yaml", flow, "absent")],
      },
      {
        intent: "definition.rename-from",
        partition: WORKFLOW_A,
        ops: [tombstoneOp("definition.yaml", "present")],
      },
      {
        intent: "run-snapshot.delete",
        partition: RUN_1,
        ops: Array.from({ length: Math.min(snapshots, 10) }, (_, i) =>
          tombstoneOp(`snapshots/${i}.json`, "present"),
        ),
      },
      { intent: "run.create", partition: RUN_2, ops: [putOp("run.json", '{"status":"running"}')] },
      {
        intent: "run.update",
        partition: RUN_1,
        ops: [putOp("run.json", '{"status":"completed"}')],
      },
    ],
  ];
}

/** What the read model must hold for one live key. */
export interface ExpectedDocument {
  readonly partition: string;
  readonly key: string;
  readonly text: string;
  readonly sha256: string;
  readonly sequence: number;
  readonly intent: string;
}

/**
 * The reference model: the units applied in order, each partition's ops in
 * staging order, each op landing in the commit the unit's result lists for
 * its partition (commits of a partition take its ops in order, `opCount` at
 * a time). Refused partitions are skipped. Returns rows sorted by
 * (partition, key) in UTF-8 byte order, like SQLite's BINARY collation.
 */
export function expectedModel(
  units: readonly UnitSpec[],
  results: readonly CommitResult[],
): ExpectedDocument[] {
  const live = new Map<string, ExpectedDocument>();
  units.forEach((spec, index) => {
    const result = results[index]!;
    const byPartition = new Map<string, { intent: string; op: OpSpec }[]>();
    for (const change of spec) {
      const list = byPartition.get(change.partition) ?? [];
      for (const op of change.ops) list.push({ intent: change.intent, op });
      byPartition.set(change.partition, list);
    }
    for (const committed of result.committed) {
      const ops = byPartition.get(committed.partition) ?? [];
      const commits = [...committed.commits].sort((a, b) => a.sequence - b.sequence);
      expect(commits.reduce((n, commit) => n + commit.opCount, 0)).toBe(ops.length);
      let at = 0;
      for (const commit of commits) {
        for (const { intent, op } of ops.slice(at, at + commit.opCount)) {
          expect(commit.intent).toBe(intent);
          const id = `${committed.partition}\u0000${op.key}`;
          if (op.op === "tombstone") live.delete(id);
          else {
            const text = op.text ?? "";
            live.set(id, {
              partition: committed.partition,
              key: op.key,
              text,
              sha256: sha256Hex(text),
              sequence: commit.sequence,
              intent,
            });
          }
        }
        at += commit.opCount;
      }
    }
  });
  return [...live.values()].sort(byPartitionAndKey);
}

export function byPartitionAndKey(
  a: { partition: string; key: string },
  b: { partition: string; key: string },
): number {
  return (
    Buffer.compare(Buffer.from(a.partition), Buffer.from(b.partition)) ||
    Buffer.compare(Buffer.from(a.key), Buffer.from(b.key))
  );
}

/** Everything a read model holds: cursor, catalog rows, and every document's bytes. */
export async function modelContents(model: ReadModel): Promise<{
  appliedCommit: number;
  catalog: CatalogRow[];
  documents: { partition: string; key: string; bytes: Buffer }[];
}> {
  return model.read(async (reader) => {
    const catalog: CatalogRow[] = [];
    for await (const row of reader.catalog({ pageSize: 97 })) catalog.push(row);
    const documents: { partition: string; key: string; bytes: Buffer }[] = [];
    for await (const { partition, key, data } of reader.documents(89)) {
      documents.push({ partition, key, bytes: Buffer.from(data) });
    }
    return { appliedCommit: (await reader.cursor()).appliedCommit, catalog, documents };
  });
}

/** The catalog rows the reference documents make, in their order (what both comparisons expect). */
function expectedCatalog(expected: readonly ExpectedDocument[]) {
  return expected.map(({ partition, key, sha256, sequence, intent }) => ({
    partition,
    key,
    sha256,
    sequence,
    intent,
  }));
}

/** Asserts a read model equals the reference: catalog rows exactly, and every document's bytes. */
export async function expectModelEquals(
  model: ReadModel,
  expected: readonly ExpectedDocument[],
): Promise<void> {
  const { catalog, documents } = await modelContents(model);
  expect(catalog).toEqual(expectedCatalog(expected));
  expect(documents.map(({ partition, key }) => [partition, key])).toEqual(
    expected.map(({ partition, key }) => [partition, key]),
  );
  documents.forEach((document, i) => {
    expect(document.bytes.equals(Buffer.from(expected[i]!.text)), document.key).toBe(true);
  });
}

/** The same comparison for what a peer process reported (digests of the documents). */
export function expectDigestsEqual(
  reported: { catalog: readonly CatalogRow[]; documents: readonly DocumentDigest[] },
  expected: readonly ExpectedDocument[],
): void {
  expect([...reported.catalog]).toEqual(expectedCatalog(expected));
  expect([...reported.documents]).toEqual(
    expected.map(({ partition, key, sha256, text }) => ({
      partition,
      key,
      sha256,
      size: Buffer.byteLength(text),
    })),
  );
}

/** A log's commits without their timestamps (which differ between runs). */
export async function commitShape(log: CommitLog) {
  const commits = await log.read((reader) => reader.commits({ limit: 1_000_000 }));
  return commits.map(({ commitId, batch, partition, sequence, intent, opCount }) => ({
    commitId,
    batch,
    partition,
    sequence,
    intent,
    opCount,
  }));
}

/** Every live key of a log, in (partition, key) order. */
export async function liveKeys(log: CommitLog) {
  return log.read(async (reader) => {
    const keys = [];
    for await (const key of reader.allLiveKeys()) keys.push(key);
    return keys;
  });
}

/** Runs the statement on the log's own connection (for inspection and tampering in tests). */
export async function onLog(log: CommitLog, sql: string, params: unknown[] = []) {
  return commitLogAccess(log).transact((tx) => tx.execute(sql, params as never));
}

/**
 * Runs one commit-log peer process to completion with a peer's driver: it
 * writes a log or catches a read model up, reports and exits.
 */
export const runLogPeer = oneShot<LogPeerRequest, LogPeerReport>(
  { file: "commit-log-peer", name: "commit-log peer" },
  PEER_TIMEOUT_MS,
);
