/**
 * Run-schema family (docs/file-format.md): a fresh run database is exactly version 1 on
 * every adapter — its header pragmas and every sqlite_schema object, in rowid
 * order, serialize to SCHEMA_V1_DIGEST; its workspace starts at the one
 * canonical empty root, which anyone can recompute from the documented
 * encoding; it is in WAL mode once open; a snapshot reports that header and
 * schema as stored and counts what the run holds. The schema keeps each
 * object id once for any writer, and a lookup by id in the documented form
 * searches the 8-byte key index. Creation is all or
 * nothing: a fault injected at any statement of it leaves no schema and both
 * pragmas 0, the open fails with that fault, and a later open creates the run
 * normally.
 */
import { createHash } from "node:crypto";
import { existsSync, statSync } from "node:fs";
import { basename } from "node:path";
import {
  APPLICATION_ID,
  EMPTY_ROOT_ID,
  RUN_SCHEMA_VERSION,
  RunStore,
  SCHEMA_V1,
  SCHEMA_V1_DIGEST,
} from "@runledger/core";
import { CHUNK_SIZE, manifestDigest, WORKSPACE_ENCODING_V1 } from "@runledger/core/engine";
import { describe, expect, it } from "vitest";
import { FaultInjector } from "../faults.js";
import { type Fixtures, failureOf } from "../fixtures.js";
import {
  CREATE,
  carriesInjected,
  createdRun,
  fingerprint,
  liveSchema,
  noise,
  openRun,
  pragma,
  raw,
  runStore,
  schemaDigest,
} from "./run-fixtures.js";
import { allObjects, apply, storedTables } from "./workspace-fixtures.js";

const sha256 = (...parts: (string | Buffer)[]) => {
  const hash = createHash("sha256");
  for (const part of parts) hash.update(part);
  return hash.digest();
};

export function describeRunSchema(fx: Fixtures): void {
  const files = fx.needs("files");
  const wal = fx.needs("walSharedMemory");
  // A server refuses application_id: a run created there has 0 in its header.
  const itHdr = fx
    .needs("local")
    .because("a server refuses application_id; the identity table names the run").it;
  describe("run schema v1", () => {
    itHdr(
      "serializes a fresh run's pragmas and sqlite_schema rows to SCHEMA_V1_DIGEST",
      async () => {
        const location = await createdRun(fx);
        const live = await liveSchema(fx, location);
        expect(live.applicationId).toBe(APPLICATION_ID);
        expect(live.userVersion).toBe(RUN_SCHEMA_VERSION);
        // Object by object first, so a difference names the object.
        expect(live.objects).toEqual(SCHEMA_V1.objects.map((object) => ({ ...object })));
        expect(schemaDigest(live)).toBe(SCHEMA_V1_DIGEST);
        expect(manifestDigest(SCHEMA_V1)).toBe(SCHEMA_V1_DIGEST);
        expect(SCHEMA_V1_DIGEST).toMatch(/^[0-9a-f]{64}$/);
      },
    );

    // biome-ignore format: gated registration; the body keeps its formatting for the merge
    wal.it("writes application_id and user_version 1 and runs in WAL mode once open", async () => {
      const location = fx.location();
      const lease = await openRun(fx, location);
      expect(await pragma(fx, location, "application_id")).toBe(APPLICATION_ID);
      expect(APPLICATION_ID).toBe(0x524c4447);
      expect(await pragma(fx, location, "user_version")).toBe(1);
      expect(await pragma(fx, location, "journal_mode")).toBe("wal");
      await lease.release();
    });

    it("starts the workspace at the canonical empty root, recomputable from its encoding", async () => {
      // Recomputed here from the documented bytes, not taken from core: the
      // node domain, level 0, no entries.
      const emptyNode = Buffer.concat([Buffer.from("runledger/node/1\u0000"), Buffer.from([0, 0])]);
      expect(EMPTY_ROOT_ID).toBe(sha256(emptyNode).toString("hex"));

      const location = await createdRun(fx);
      const [objects, identity, current, chunks] = await raw(fx, location, [
        "SELECT lower(hex(id)) AS id, kind, size, lower(hex(data)) AS data FROM workspace_object",
        "SELECT application_id, format, version, encoding FROM runledger_identity",
        "SELECT lower(hex(root_id)) AS id FROM workspace_current",
        "SELECT count(*) AS n FROM workspace_chunk",
      ]);
      expect(objects).toEqual([
        { id: EMPTY_ROOT_ID, kind: 0, size: emptyNode.length, data: emptyNode.toString("hex") },
      ]);
      expect(identity).toEqual([
        {
          application_id: APPLICATION_ID,
          format: "runledger run database",
          version: 1,
          encoding: WORKSPACE_ENCODING_V1,
        },
      ]);
      expect(current).toEqual([{ id: EMPTY_ROOT_ID }]);
      expect(chunks).toEqual([{ n: 0 }]);

      // The journal records the current root with every event.
      const lease = await openRun(fx, location);
      const appended = await lease.transact((tx) => tx.journal.append({ hello: "root" }));
      expect(appended.rootId).toBe(EMPTY_ROOT_ID);
    });

    it("refuses a run whose identity row records another workspace encoding, whoever created it, and changes nothing", async () => {
      // On a server as on a file: the encoding is a row, written by creation without any pragma.
      const location = await createdRun(fx);
      const other = WORKSPACE_ENCODING_V1.replace(/;cut=1\/\d+;/, ";cut=1/12;");
      expect(other).not.toBe(WORKSPACE_ENCODING_V1);
      await raw(fx, location, [`UPDATE runledger_identity SET encoding = '${other}'`]);
      const state = () =>
        raw(fx, location, [
          "SELECT encoding FROM runledger_identity",
          "SELECT count(*) AS n FROM journal",
          "SELECT status, updated_at FROM run",
        ]);
      const before = await state();
      for (const options of [{ readOnly: true }, {}, { create: CREATE }]) {
        const error = await failureOf(() => runStore(fx).open(location, options));
        expect(error.code, JSON.stringify(options)).toBe("encoding_mismatch");
        expect(error.details).toEqual({ found: other, expected: WORKSPACE_ENCODING_V1 });
      }
      expect(await state()).toEqual(before);
      // Nothing else about the file was wrong: with this build's encoding it opens.
      await raw(fx, location, [
        `UPDATE runledger_identity SET encoding = '${WORKSPACE_ENCODING_V1}'`,
      ]);
      const lease = await runStore(fx).open(location);
      expect((await lease.read((r) => r.run.get())).runId).toBe(CREATE.runId);
      await lease.release();
    });

    it("keeps each object id once for any writer: a repeated insert is skipped, an id update refused", async () => {
      const location = await createdRun(fx);
      const id = sha256("abc").toString("hex");
      const count = `SELECT count(*) AS n, lower(hex(data)) AS data FROM workspace_object WHERE id = X'${id}'`;
      // One statement naming the id twice stores it once; a later insert of it is skipped too,
      // leaving the stored row as it is.
      const [, first] = await raw(fx, location, [
        `INSERT INTO workspace_object (id, kind, size, data) VALUES (X'${id}', 0, 3, X'616263'), (X'${id}', 0, 3, X'616263')`,
        count,
      ]);
      expect(first).toEqual([{ n: 1, data: "616263" }]);
      const [, again] = await raw(fx, location, [
        `INSERT INTO workspace_object (id, kind, size, data) VALUES (X'${id}', 0, 3, X'78797a')`,
        count,
      ]);
      expect(again).toEqual([{ n: 1, data: "616263" }]);

      const refused = await failureOf(() =>
        raw(fx, location, [`UPDATE workspace_object SET id = zeroblob(32) WHERE id = X'${id}'`]),
      );
      // The trigger's own words (a driver without result codes reports no "constraint" code).
      expect(refused.message).toContain("an object id never changes");
      expect((await raw(fx, location, [count]))[0]).toEqual([{ n: 1, data: "616263" }]);
      // Other columns stay writable (a rewrite of a row keeps its id).
      const [, rewritten] = await raw(fx, location, [
        `UPDATE workspace_object SET data = X'78797a' WHERE id = X'${id}'`,
        count,
      ]);
      expect(rewritten).toEqual([{ n: 1, data: "78797a" }]);
    });

    it("finds an object by id through the 8-byte key index, in the documented form", async () => {
      const location = await createdRun(fx);
      const key = `substr(X'${EMPTY_ROOT_ID}', 1, 8)`;
      const [plan, found] = await raw(fx, location, [
        `EXPLAIN QUERY PLAN SELECT kind, data FROM workspace_object WHERE substr(id, 1, 8) = ${key} AND id = X'${EMPTY_ROOT_ID}'`,
        `SELECT lower(hex(id)) AS id FROM workspace_object WHERE substr(id, 1, 8) = ${key} AND id = X'${EMPTY_ROOT_ID}'`,
      ]);
      expect(plan!.map((row) => String(row.detail))).toEqual([
        "SEARCH workspace_object USING INDEX workspace_object_by_id (<expr>=?)",
      ]);
      expect(found).toEqual([{ id: EMPTY_ROOT_ID }]);
    });

    it("holds the run's identity, definition, status running and no reason", async () => {
      const location = fx.location();
      const lease = await openRun(fx, location, { clock: () => 1_700_000_000_123 });
      const run = await lease.read((r) => r.run.get());
      expect(run).toEqual({
        workflowId: CREATE.workflowId,
        runId: CREATE.runId,
        definition: CREATE.definition,
        status: "running",
        stopReason: null,
        createdAt: 1_700_000_000_123,
        updatedAt: 1_700_000_000_123,
      });
      expect(await lease.read((r) => r.journal.list())).toEqual([]);
    });

    itHdr("a snapshot reports the schema as stored and counts what the run holds", async () => {
      const location = fx.location();
      const lease = await openRun(fx, location);
      const snapshot = () =>
        lease.read(async (r) => ({ schema: await r.schema(), counts: await r.counts() }));

      const fresh = await snapshot();
      expect(fresh.schema).toEqual({
        applicationId: APPLICATION_ID,
        userVersion: RUN_SCHEMA_VERSION,
        journalMode: "wal",
        objects: SCHEMA_V1.objects.map((object) => ({ ...object })),
      });
      expect(RUN_SCHEMA_VERSION).toBe(1);
      // The snapshot's schema is the SQL alone; the digest also covers the encoding the
      // identity row records, which is this build's ("starts the workspace…" reads the row).
      expect(schemaDigest(fresh.schema)).not.toBe(SCHEMA_V1_DIGEST);
      expect(schemaDigest({ ...fresh.schema, encoding: WORKSPACE_ENCODING_V1 })).toBe(
        SCHEMA_V1_DIGEST,
      );
      // Only the canonical empty root's node.
      expect(fresh.counts).toEqual({
        events: 0,
        firstSequence: null,
        lastSequence: null,
        objects: 1,
        chunks: 0,
        roots: 0,
        pins: 0,
      });

      await lease.transact(async (tx) => {
        await tx.journal.append({ step: "fetch" });
        await tx.journal.append({ step: "build" });
      });
      // Two files: a small one inline in notes/'s node, a large one of two pieces (its object
      // is the piece list); a top node and notes/'s.
      await apply(lease, {
        put: { "notes/plan.md": "# Plan\n", "data.bin": noise("counts", CHUNK_SIZE + 100) },
      });
      // One new small file (inline); a new notes/ node and top node, data.bin shared.
      const { sequence } = await apply(lease, { put: { "notes/plan.md": "# Plan, revised\n" } });
      expect(sequence).toBe(4);
      await lease.transact(async (tx) => {
        await tx.workspace.pin("release");
        // Events 1 and 2 go; the objects they retained stay until garbage collection.
        expect(await tx.workspace.prune({ before: 3 })).toBe(2);
      });

      const held = await snapshot();
      expect(held.schema).toEqual(fresh.schema);
      expect(held.counts).toEqual({
        events: 2,
        firstSequence: 3,
        lastSequence: 4,
        objects: held.counts.objects,
        chunks: 2,
        roots: 2,
        pins: 1,
      });
      // One file object (data.bin's piece list: the plans are inline) and every node stored:
      // the empty root's and the two roots' (how many depends on where names cut).
      const stored = allObjects(await storedTables(lease));
      expect(stored.files.size).toBe(1);
      expect(held.counts.objects).toBe(stored.files.size + stored.nodes.size);
      expect(stored.nodes.size).toBeGreaterThanOrEqual(5);
    });

    it("opens an existing run only under its own identity", async () => {
      const location = await createdRun(fx);
      const store = runStore(fx);
      const lease = await store.open(location);
      expect((await lease.read((r) => r.run.get())).runId).toBe(CREATE.runId);
      await lease.release();
      const error = await failureOf(() =>
        runStore(fx).open(location, { create: { workflowId: CREATE.workflowId, runId: "other" } }),
      );
      expect(error.code).toBe("run_identity_mismatch");
      expect(error.details).toEqual({ workflowId: CREATE.workflowId, runId: CREATE.runId });
    });

    it("refuses a create naming another run however the open meets the entry: establishing it, finding it open, or joining its opening", async () => {
      const other = { workflowId: CREATE.workflowId, runId: "other" };
      const mismatch = (error: { code: string; details?: unknown }) => {
        expect(error.code).toBe("run_identity_mismatch");
        expect(error.details).toEqual({ workflowId: CREATE.workflowId, runId: CREATE.runId });
      };
      // Found open: a lease of the same store holds the entry.
      const store = runStore(fx);
      const location = fx.location();
      const held = await store.open(location, { create: CREATE });
      mismatch(await failureOf(() => store.open(location, { create: other })));
      await held.release();
      // Joined: two opens at once, the second sharing the first's opening.
      const joining = runStore(fx);
      const first = joining.open(location, { create: CREATE });
      mismatch(await failureOf(() => joining.open(location, { create: other })));
      await (await first).release();
      // Establishing: a store with nothing open there, the identity checked by the open itself.
      mismatch(await failureOf(() => runStore(fx).open(location, { create: other })));
      // The run is as it was, and the same create opens it wherever the entry stands.
      const again = await store.open(location, { create: CREATE });
      expect((await again.read((r) => r.run.get())).runId).toBe(CREATE.runId);
      await again.release();
    });

    // biome-ignore format: gated registration; the body keeps its formatting for the merge
    files.it("refuses a missing location without create as not_found and creates no file", async () => {
      const location = fx.location();
      const before = await fingerprint(location);
      const error = await failureOf(() => runStore(fx).open(location));
      expect(error.code).toBe("not_found");
      expect(existsSync(location)).toBe(false);
      expect(await fingerprint(location)).toEqual(before);
    });

    // biome-ignore format: gated registration; the body keeps its formatting for the merge
    files.it("leaves no schema and both pragmas 0 after a fault at any statement of creation", async () => {
      const faults = new FaultInjector(fx.driver());
      const outcomes: { k: number; statement: string; state: string }[] = [];
      let commitAt = 0;
      for (let k = 1; ; k++) {
        expect(k, "creation never finished without a fault").toBeLessThan(1_000);
        const location = fx.location();
        const from = faults.statements.length;
        faults.arm({ nth: k });
        const store = new RunStore({ driver: faults.driver, busyTimeoutMs: 1_000 });
        let failure: unknown;
        try {
          const lease = await store.open(location, { create: CREATE });
          await lease.release();
        } catch (error) {
          failure = error;
        } finally {
          await store.close();
        }
        const fired = faults.fired;
        faults.disarm();
        const issued = faults.statements.slice(from);
        if (fired === 0) {
          expect(failure).toBeUndefined();
          const begin = issued.indexOf("BEGIN IMMEDIATE");
          expect(begin).toBeGreaterThanOrEqual(0);
          commitAt = issued.indexOf("COMMIT", begin) + 1;
          expect(await creationState(fx, location)).toBe("complete");
          break;
        }
        const statement = issued[k - 1] ?? "?";
        expect(carriesInjected(failure), `open with a fault at ${k}: ${statement}`).toBe(true);
        outcomes.push({ k, statement, state: await creationState(fx, location) });

        // Nothing the failed creation left behind stands in the way of the next one.
        const retry = new RunStore({ driver: fx.driver(), busyTimeoutMs: 2_000 });
        try {
          const lease = await retry.open(location, { create: CREATE });
          expect((await lease.read((r) => r.run.get())).runId).toBe(CREATE.runId);
          await lease.release();
        } finally {
          await retry.close();
        }
      }

      expect(commitAt).toBeGreaterThan(0);
      for (const { k, statement, state } of outcomes) {
        // Up to and including COMMIT nothing was written; after it the run is whole.
        expect(state, `fault at statement ${k}: ${statement}`).toBe(
          k <= commitAt ? "nothing" : "complete",
        );
      }
      const faulted = new Set(outcomes.map((outcome) => outcome.statement));
      // The objects may go in one script (one call, one round trip): each is faulted with it.
      for (const object of SCHEMA_V1.objects) {
        if (object.sql === null) continue;
        expect(
          [...faulted].some((statement) => statement.includes(object.sql as string)),
          object.name,
        ).toBe(true);
      }
      expect(faulted).toContain(`PRAGMA application_id = ${APPLICATION_ID}`);
      expect(faulted).toContain(`PRAGMA user_version = ${RUN_SCHEMA_VERSION}`);
      expect(faulted).toContain("COMMIT");
    });
  });
}

/**
 * "nothing" (no file, an empty file, or pragmas 0 and no objects, with no
 * hot journal beside it), "complete" (exactly version 1), or what was found.
 */
async function creationState(fx: Fixtures, location: string): Promise<string> {
  const { listing } = await fingerprint(location);
  if (listing.includes(`${basename(location)}-journal`)) return "a hot journal was left";
  if (!existsSync(location) || statSync(location).size === 0) return "nothing";
  const live = await liveSchema(fx, location);
  if (live.applicationId === 0 && live.userVersion === 0 && live.objects.length === 0) {
    return "nothing";
  }
  if (schemaDigest(live) === SCHEMA_V1_DIGEST) return "complete";
  return `partial: application_id ${live.applicationId}, user_version ${live.userVersion}, ${live.objects.length} objects`;
}
