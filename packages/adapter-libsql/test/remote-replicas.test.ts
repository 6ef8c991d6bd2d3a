/**
 * Replicas of a run on a libSQL server (docs/remote.md, "Topologies"):
 * - an embedded replica, `libsqlDriver({ syncUrl })`: a local file that
 *   follows the server's database; reads from the file, writes to the server;
 * - a replica server, sqld started with `--primary-grpc-url`: reads served
 *   there, writes forwarded to the primary.
 * Each against real sqld processes started here; waits are on conditions,
 * with generous deadlines.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { libsqlDriver } from "@runledger/adapter-libsql";
import { type SqldServer, startSqld } from "@runledger/conformance/sqld";
import { isRunledgerError, type RunLease, RunStore } from "@runledger/core";
import { afterAll, describe, expect, it } from "vitest";

const CREATE = { workflowId: "replicas", runId: "run-1" };
const directory = mkdtempSync(join(tmpdir(), "runledger-replicas-"));
afterAll(() => rmSync(directory, { recursive: true, force: true }));

async function records(lease: RunLease): Promise<unknown[]> {
  return (await lease.read((r) => r.journal.list())).map((event) => event.record);
}

/** Waits until `check` is true, polling, up to a deadline a loaded machine will not miss. */
async function eventually(check: () => Promise<boolean>, what: string): Promise<number> {
  const started = Date.now();
  for (;;) {
    if (await check()) return Date.now() - started;
    if (Date.now() - started > 60_000) throw new Error(`not within 60 s: ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
}

describe("remote libSQL: an embedded replica (syncUrl)", async () => {
  const server = await startSqld();
  afterAll(() => server.stop());

  it("reads a run written on the server from a local file, sends its own writes to the server, and sees the server's after a sync", async () => {
    const primary = new RunStore({ driver: libsqlDriver() });
    const onServer = await primary.open(server.url("http"), { create: CREATE });
    await onServer.transact((tx) =>
      tx.workspace.apply({ put: { "plan.json": '{"step":1}' } }, { event: { step: 1 } }),
    );
    const file = join(directory, "embedded.db");
    const replicated = new RunStore({ driver: libsqlDriver({ syncUrl: server.url("http") }) });
    try {
      const local = await replicated.open(file);
      expect(await records(local)).toStrictEqual([{ step: 1 }]);
      const plan = await local.read((r) => r.workspace.read("plan.json"));
      expect(new TextDecoder().decode(plan)).toBe('{"step":1}');
      // A write through the replica lands on the server, and the replica reads it back.
      await local.transact((tx) => tx.journal.append({ step: 2, from: "replica" }));
      expect(await records(local)).toStrictEqual([{ step: 1 }, { step: 2, from: "replica" }]);
      expect(await records(onServer)).toStrictEqual([{ step: 1 }, { step: 2, from: "replica" }]);
      // Reads are served from the file: with the server down the run still reads, and a write
      // fails with the remote code, nothing of it anywhere.
      await server.crash();
      try {
        expect(await records(local)).toHaveLength(2);
        const offline = await local
          .transact((tx) => tx.journal.append({ step: "lost" }))
          .catch((error: unknown) => error);
        expect(isRunledgerError(offline) ? offline.code : offline).toMatch(
          /^(server_unreachable|connection_lost)$/,
        );
      } finally {
        await server.restart();
      }
      // Another writer's event reaches the file when it syncs: the next open of the run.
      await onServer.transact((tx) => tx.journal.append({ step: 3, from: "server" }));
      await local.release();
      await replicated.close();
      const again = new RunStore({ driver: libsqlDriver({ syncUrl: server.url("http") }) });
      try {
        const reopened = await again.open(file);
        expect((await records(reopened)).at(-1)).toStrictEqual({ step: 3, from: "server" });
        expect((await reopened.verify()).ok).toBe(true);
      } finally {
        await again.close();
      }
      // The file itself holds the run: a plain local open reads it, without the server.
      const plain = new RunStore({ driver: libsqlDriver() });
      try {
        const copy = await plain.open(file, { readOnly: true });
        expect(await records(copy)).toHaveLength(3);
      } finally {
        await plain.close();
      }
    } finally {
      await replicated.close();
      await primary.close();
    }
  });

  it("follows one database: a second file through the same driver, a server URL, or a bad syncUrl is refused", async () => {
    const driver = libsqlDriver({ syncUrl: server.url("http") });
    const store = new RunStore({ driver });
    try {
      const first = await store.open(join(directory, "one.db"));
      await first.release();
      const second = await store.open(join(directory, "two.db")).catch((error: unknown) => error);
      expect(isRunledgerError(second, "invalid_argument")).toBe(true);
      const url = await store.open(server.url("ws")).catch((error: unknown) => error);
      expect(isRunledgerError(url, "invalid_argument")).toBe(true);
    } finally {
      await store.close();
    }
    for (const options of [
      { syncUrl: join(directory, "x.db") },
      { syncUrl: server.url("http"), syncInterval: 0 },
      { syncInterval: 5 },
      { syncUrl: server.url("http"), encryptionKey: "k" },
    ]) {
      expect(() => libsqlDriver(options)).toThrow(
        expect.objectContaining({ code: "invalid_argument" }),
      );
    }
  });
});

describe("remote libSQL: a primary and a replica server", async () => {
  const primary: SqldServer = await startSqld({ primary: true });
  const replica: SqldServer = await startSqld({ replicaOf: primary.grpcUrl as string });
  afterAll(async () => {
    await replica.stop();
    await primary.stop();
  });

  for (const protocol of ["ws", "http"] as const) {
    it(`over ${protocol}: a run written on the primary is read on the replica; a write through the replica lands on the primary`, async () => {
      const store = new RunStore({ driver: libsqlDriver() });
      try {
        const first = protocol === "ws";
        const onPrimary = await store.open(primary.url(protocol), first ? { create: CREATE } : {});
        const step = (await records(onPrimary)).length + 1;
        await onPrimary.transact((tx) => tx.journal.append({ step, on: "primary" }));
        const onReplica = await store.open(replica.url(protocol));
        const lagMs = await eventually(
          async () => (await records(onReplica)).length === step,
          "the primary's event on the replica",
        );
        expect(lagMs).toBeGreaterThanOrEqual(0);
        await onReplica.transact((tx) => tx.journal.append({ step: step + 1, on: "replica" }));
        expect((await records(onPrimary)).at(-1)).toStrictEqual({ step: step + 1, on: "replica" });
        await eventually(
          async () => (await records(onReplica)).length === step + 1,
          "the replica's own write on the replica",
        );
        expect((await onPrimary.verify()).ok).toBe(true);
      } finally {
        await store.close();
      }
    });
  }
});
