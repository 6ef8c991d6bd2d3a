/**
 * Strict arguments family (docs/api.md): every options object of the run API
 * refuses a name it does not know with `invalid_argument` naming it, before
 * anything is read or written — a typo is reported, never ignored. Each
 * method is walked with one unknown option; the run's tables are compared
 * before and after, and the run (or the location, for an open) is checked
 * to be as it was.
 */
import { existsSync } from "node:fs";
import { RunStore } from "@runledger/core";
import {
  CommitLogStore,
  put,
  ReadModelStore,
  renameDefinition,
  tombstone,
} from "@runledger/core/commit-log";
import { DatastoreStore, WorkflowRunRepository } from "@runledger/core/datastore";
import { ConnectionProvider } from "@runledger/core/engine";
import { describe, expect, it } from "vitest";
import { type Fixtures, failureOf } from "../fixtures.js";
import { CREATE, openRun, runStore } from "./run-fixtures.js";
import { dumpTables } from "./workspace-fixtures.js";

/** A name no options object knows, as any options type (the compiler would refuse it otherwise). */
const UNKNOWN = { oops: true } as never;
/** The same name, to spread into an otherwise valid options object. */
const EXTRA = { oops: true } as object;

export function describeStrictArguments(fx: Fixtures): void {
  describe("strict arguments", () => {
    it("refuses an unknown option of every run method with invalid_argument naming it, nothing written", async () => {
      const lease = await openRun(fx, fx.location());
      const first = await lease.transact(async (tx) => {
        await tx.workspace.apply({ put: { "a.txt": "a" } });
        return tx.journal.append({ n: 1 }, { key: "k" });
      });
      const calls: [string, () => Promise<unknown>][] = [
        ["append", () => lease.transact((tx) => tx.journal.append({ n: 2 }, UNKNOWN))],
        ["journal.list", () => lease.read((r) => r.journal.list(UNKNOWN))],
        ["journal.stream", () => lease.read((r) => r.journal.stream(UNKNOWN).next())],
        ["apply's changes", () => lease.transact((tx) => tx.workspace.apply(UNKNOWN))],
        [
          "apply's options",
          () => lease.transact((tx) => tx.workspace.apply({ put: { "b.txt": "b" } }, UNKNOWN)),
        ],
        ["read", () => lease.read((r) => r.workspace.read("a.txt", UNKNOWN))],
        ["stream", () => lease.read((r) => r.workspace.stream("a.txt", UNKNOWN).next())],
        ["stat", () => lease.read((r) => r.workspace.stat("a.txt", UNKNOWN))],
        ["list", () => lease.read((r) => r.workspace.list("", UNKNOWN))],
        ["entries", () => lease.read((r) => r.workspace.entries("", UNKNOWN).next())],
        ["walk", () => lease.read((r) => r.workspace.walk("", UNKNOWN).next())],
        ["pin", () => lease.transact((tx) => tx.workspace.pin("p", UNKNOWN))],
        ["prune", () => lease.transact((tx) => tx.workspace.prune({ before: 2, ...EXTRA }))],
        [
          "stop",
          () =>
            lease.transact((tx) =>
              tx.run.stop({ status: "completed", reason: { event: first.sequence }, ...EXTRA }),
            ),
        ],
        ["verify", () => lease.verify(UNKNOWN)],
      ];
      const before = await dumpTables(lease);
      for (const [method, call] of calls) {
        const error = await failureOf(call);
        expect(error.code, method).toBe("invalid_argument");
        expect(error.message, method).toContain('"oops"');
        expect(error.details, method).toMatchObject({ name: "oops" });
      }
      expect(await dumpTables(lease)).toStrictEqual(before);
      expect((await lease.read((r) => r.run.get())).status).toBe("running");
    });

    it("refuses an apply whose put is not a map of paths or whose delete is not an array, nothing written", async () => {
      const lease = await openRun(fx, fx.location());
      await lease.transact((tx) => tx.workspace.apply({ put: { a: "a", b: "b" } }));
      const before = await dumpTables(lease);
      const malformed: [string, object, string][] = [
        ["put as an array", { put: ["a.txt"] }, "put"],
        ["put as a string", { put: "a.txt" }, "put"],
        ["put as null", { put: null }, "put"],
        // As a string, delete would be iterable: each character a path ("a", "b"), both files here.
        ["delete as a string", { delete: "ab" }, "delete"],
        ["delete as an object", { delete: { "a.txt": true } }, "delete"],
      ];
      for (const [label, changes, named] of malformed) {
        const error = await failureOf(() =>
          lease.transact((tx) => tx.workspace.apply(changes as never)),
        );
        expect(error.code, label).toBe("invalid_argument");
        expect(error.message, label).toContain(`apply's ${named}`);
      }
      expect(await dumpTables(lease)).toStrictEqual(before);
    });

    it("refuses an unknown option of resume, nothing written", async () => {
      const lease = await openRun(fx, fx.location());
      await lease.transact((tx) => tx.run.stop({ status: "suspended" }));
      const before = await dumpTables(lease);
      const error = await failureOf(() => lease.transact((tx) => tx.run.resume(UNKNOWN)));
      expect(error.code).toBe("invalid_argument");
      expect(error.message).toContain('"oops"');
      expect(await dumpTables(lease)).toStrictEqual(before);
    });

    it("refuses unknown names in RunStore's options, open's options, create and fork's options, list's and reconcile's, creating nothing", async () => {
      const file = fx.subject.capabilities?.files === true;
      const location = fx.location();
      const construct = await failureOf(
        async () => new RunStore({ driver: fx.driver(), ...EXTRA }),
      );
      expect(construct.code).toBe("invalid_argument");
      const store = runStore(fx);
      // The catalog's calls: a listing's filter or a reconcile's option misspelt is not ignored.
      const listing = runStore(fx, { catalog: fx.location() });
      for (const call of [
        () => listing.list({ status: "running", ...EXTRA } as never),
        () => listing.reconcile({ ...EXTRA } as never),
      ]) {
        const error = await failureOf(call);
        expect([error.code, error.details?.name]).toStrictEqual(["invalid_argument", "oops"]);
      }
      for (const options of [{ create: CREATE, ...EXTRA }, { create: { ...CREATE, ...EXTRA } }]) {
        const error = await failureOf(() => store.open(location, options));
        expect(error.code).toBe("invalid_argument");
        expect(error.message).toContain('"oops"');
      }
      if (file) expect(existsSync(location)).toBe(false);
      const source = await openRun(fx, fx.location());
      const fork = await failureOf(() =>
        store.fork(source.location, fx.location(), { create: CREATE, ...EXTRA }),
      );
      expect(fork.code).toBe("invalid_argument");
      // A fork point of no known shape would otherwise fork from the current root.
      for (const at of [
        { seq: 1 },
        { sequence: 1, root: "0".repeat(64) },
        { sequence: 0 },
        { root: "ab" },
      ]) {
        const misnamed = await failureOf(() =>
          store.fork(source.location, fx.location(), { create: CREATE, at: at as never }),
        );
        expect(misnamed.code).toBe("invalid_argument");
      }
    });

    it("refuses unknown names in the provider's and the commit log's, read model's and datastore's store options", async () => {
      for (const construct of [
        () => new ConnectionProvider({ driver: fx.driver(), ...EXTRA }),
        () => new CommitLogStore({ driver: fx.driver(), ...EXTRA }),
        () => new ReadModelStore({ driver: fx.driver(), ...EXTRA }),
        () => new DatastoreStore({ driver: fx.driver(), ...EXTRA }),
      ]) {
        const error = await failureOf(async () => construct());
        expect(error.code).toBe("invalid_argument");
        expect(error.message).toContain('"oops"');
      }
    });

    it("refuses unknown names in the typed-change builders' options", async () => {
      for (const build of [
        () => put("a.json", "{}", UNKNOWN),
        () => tombstone("a.json", UNKNOWN),
        () =>
          renameDefinition({
            kind: "model",
            from: "a",
            to: "b",
            put: { key: "definition.yaml", content: "x" },
            ...EXTRA,
          } as never),
        () =>
          renameDefinition({
            kind: "model",
            from: "a",
            to: "b",
            put: { key: "definition.yaml", content: "x", ...EXTRA } as never,
          }),
      ]) {
        const error = await failureOf(async () => build());
        expect(error.code).toBe("invalid_argument");
        expect(error.message).toContain('"oops"');
      }
      // The same calls with only known names build their changes.
      expect(put("a.json", "{}", { expect: "absent" })).toMatchObject({
        op: "put",
        expect: "absent",
      });
      expect(tombstone("a.json", { expect: "present" })).toMatchObject({ op: "tombstone" });
    });

    it("refuses unknown names in a repository's options, its builders and collectSnapshots, writing nothing", async () => {
      const datastores = new DatastoreStore({ driver: fx.driver() });
      try {
        const datastore = await datastores.open(fx.location(), { create: true });
        try {
          for (const construct of [
            () => new WorkflowRunRepository(datastore, UNKNOWN),
            () => new WorkflowRunRepository(datastore, { builders: UNKNOWN }),
          ]) {
            const error = await failureOf(async () => construct());
            expect(error.code).toBe("invalid_argument");
            expect(error.message).toContain('"oops"');
          }
          const runs = new WorkflowRunRepository(datastore);
          const run = { workflowId: "w", runId: "r" };
          const error = await failureOf(() => runs.collectSnapshots(run, { keep: 1, ...EXTRA }));
          expect(error.code).toBe("invalid_argument");
          expect(error.message).toContain('"oops"');
          expect(await runs.collectSnapshots(run, { keep: 1 })).toBe(0);
        } finally {
          await datastore.release();
        }
      } finally {
        await datastores.close();
      }
    });

    it("refuses unknown names in the commit log's, read model's and datastore's open, begin, resume and catchUp, creating nothing", async () => {
      const file = fx.subject.capabilities?.files === true;
      const logs = new CommitLogStore({ driver: fx.driver() });
      const models = new ReadModelStore({ driver: fx.driver() });
      const datastores = new DatastoreStore({ driver: fx.driver() });
      try {
        const location = fx.location();
        for (const open of [
          () => logs.open(location, { create: true, ...EXTRA }),
          () => models.open(location, { create: true, ...EXTRA }),
          () => datastores.open(location, { create: true, ...EXTRA }),
        ]) {
          const error = await failureOf(open);
          expect(error.code).toBe("invalid_argument");
          expect(error.message).toContain('"oops"');
        }
        if (file) expect(existsSync(location)).toBe(false);
        const log = await logs.open(fx.location(), { create: true });
        const model = await models.open(fx.location(), { create: true });
        try {
          for (const call of [
            () => log.begin(UNKNOWN),
            () => log.resume("some-txn", UNKNOWN),
            () => model.catchUp(log, UNKNOWN),
          ]) {
            expect((await failureOf(call)).code).toBe("invalid_argument");
          }
          expect(await model.catchUp(log)).toMatchObject({ commits: 0 });
        } finally {
          await log.release();
          await model.release();
        }
      } finally {
        await Promise.all([logs.close(), models.close(), datastores.close()]);
      }
    });
  });
}
