/**
 * The run API end to end on a real libSQL server, over http and ws: a
 * multi-MiB file streamed in, history, verify, stop, garbage collection, and
 * forks from the server to a local file and from a local file to the server
 * (a run keeps one format on every backend).
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { libsqlDriver } from "@runledger/adapter-libsql";
import { resolveLocalhostSubdomains, startSqld } from "@runledger/conformance/sqld";
import { RunStore } from "@runledger/core";
import { afterAll, describe, expect, it } from "vitest";

const MiB = 1024 * 1024;
/** 6 MiB in 1 MiB pieces, each byte a function of its offset. */
async function* bigFile(): AsyncGenerator<Uint8Array> {
  for (let piece = 0; piece < 6; piece++) {
    const bytes = new Uint8Array(MiB);
    for (let i = 0; i < MiB; i++) bytes[i] = (piece * MiB + i) % 251;
    yield bytes;
  }
}

function sameAsBigFile(bytes: Uint8Array): boolean {
  if (bytes.byteLength !== 6 * MiB) return false;
  for (let i = 0; i < bytes.byteLength; i++) if (bytes[i] !== i % 251) return false;
  return true;
}

resolveLocalhostSubdomains();
const server = await startSqld({ namespaces: true });
const directory = mkdtempSync(join(tmpdir(), "runledger-remote-api-"));
afterAll(async () => {
  await server.stop();
  rmSync(directory, { recursive: true, force: true });
});
let next = 0;

describe("remote libSQL: the run API", () => {
  for (const protocol of ["http", "ws"] as const) {
    it(`over ${protocol}: streams a 6 MiB file in, reads it back, keeps history, verifies, stops, collects garbage, and forks to a file and back`, async () => {
      const store = new RunStore({ driver: libsqlDriver({ adminUrl: server.adminUrl as string }) });
      const remote = server.namespaceUrl(`api-${protocol}-${++next}`, protocol);
      try {
        const lease = await store.open(remote, { create: { workflowId: "api", runId: "source" } });
        const first = await lease.transact((tx) =>
          tx.workspace.apply(
            { put: { "big.bin": bigFile(), "notes.txt": "v1" } },
            { event: { step: 1 } },
          ),
        );
        const second = await lease.transact((tx) =>
          tx.workspace.apply(
            { put: { "notes.txt": "v2" }, delete: ["big.bin"] },
            { event: { step: 2 } },
          ),
        );
        const history = await lease.read(async (r) => {
          const roots = [];
          for await (const entry of r.workspace.history()) roots.push(entry);
          return roots;
        });
        expect(history.slice(-2).map((e) => [e.sequence, e.rootId])).toStrictEqual([
          [first.sequence, first.rootId],
          [second.sequence, second.rootId],
        ]);
        const firstRoot = first.rootId;
        const big = await lease.read((r) => r.workspace.read("big.bin", { root: firstRoot }));
        expect(sameAsBigFile(big)).toBe(true);
        expect((await lease.verify()).problems).toStrictEqual([]);

        // Remote → file, at the root that still holds the big file.
        const file = join(directory, `fork-${protocol}.sqlite`);
        const toFile = await store.fork(remote, file, {
          create: { workflowId: "api", runId: "on-file" },
          at: { root: firstRoot },
        });
        expect(sameAsBigFile(await toFile.lease.read((r) => r.workspace.read("big.bin")))).toBe(
          true,
        );
        expect((await toFile.lease.verify()).ok).toBe(true);

        // File → remote.
        const back = server.namespaceUrl(`api-back-${protocol}-${next}`, protocol);
        const toRemote = await store.fork(file, back, {
          create: { workflowId: "api", runId: "back" },
        });
        const names = await toRemote.lease.read((r) => r.workspace.list());
        expect(names.map((entry) => entry.name).sort()).toStrictEqual(["big.bin", "notes.txt"]);
        expect((await toRemote.lease.verify()).ok).toBe(true);
        await toFile.lease.release();
        await toRemote.lease.release();

        // Garbage collection on the server: after pruning, the big file's chunks go.
        const collected = await lease.transact(async (tx) => {
          await tx.workspace.prune({ before: second.sequence });
          return tx.workspace.collectGarbage();
        });
        expect(collected.chunks).toBeGreaterThan(0);
        const stopped = await lease.transact((tx) => tx.run.stop({ status: "completed" }));
        expect(stopped.status).toBe("completed");
        expect((await lease.verify()).ok).toBe(true);
        await lease.release();
      } finally {
        await store.close();
      }
    }, 240_000);
  }

  it("a catalog on the server lists its runs; reconcile with a server URL as directory is listing_unsupported, without one it checks the rows", async () => {
    const store = new RunStore({
      driver: libsqlDriver({ adminUrl: server.adminUrl as string }),
      catalog: server.namespaceUrl(`catalog${process.pid}n${++next}`, "ws"),
    });
    try {
      const location = server.namespaceUrl(`listed${process.pid}n${++next}`, "ws");
      const lease = await store.open(location, { create: { workflowId: "remote", runId: "r1" } });
      await lease.transact((tx) => tx.run.stop({ status: "completed" }));
      await lease.release();
      const { runs } = await store.list({ status: "completed" });
      expect(runs.map((run) => [run.location, run.runId])).toStrictEqual([[location, "r1"]]);
      const refused = await store.reconcile({ directory: server.url("ws") }).catch((e) => e);
      expect(refused.code).toBe("listing_unsupported");
      expect(await store.reconcile()).toMatchObject({ unchanged: 1, removed: [] });
    } finally {
      await store.close();
    }
  }, 120_000);
});
