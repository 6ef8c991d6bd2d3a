/**
 * Round trips on a libSQL server: a transaction reaches the server in as few
 * requests as the protocol allows (docs/remote.md). Counted over http, where
 * each request passes a recording proxy (recordHttpRequests): BEGIN goes with the first
 * statement (the write lock taken there), core's SAVEPOINT and RELEASE and a
 * step's new tree nodes with the statements after them, and what a
 * savepoint held back is never sent when nothing else was; an optimistic
 * transaction whose every statement was held back goes whole, in one
 * request. The stream's close is sent after COMMIT without waiting for its
 * answer, so it is not counted.
 */

import { createClient } from "@libsql/client";
import { WebSocket } from "@libsql/hrana-client";
import { libsqlDriver } from "@runledger/adapter-libsql";
import {
  recordHttpRequests,
  resolveLocalhostSubdomains,
  startSqld,
} from "@runledger/conformance/sqld";
import { isRunledgerError, type RunLease, RunStore } from "@runledger/core";
import { afterAll, describe, expect, it } from "vitest";
import { startHrana2Proxy } from "./support/hrana2-proxy.js";

resolveLocalhostSubdomains();
const server = await startSqld({ namespaces: true });
afterAll(() => server.stop());

/** Every request sent to the server at the recorder's URLs. */
const recorder = await recordHttpRequests(server);
const { requestsOf } = recorder;
afterAll(() => recorder.stop());

/**
 * The kinds of the messages WebSocket clients send while `action` runs (the
 * clients' own class, shared by @libsql/client and the kept stream).
 */
async function messagesOf(action: () => Promise<unknown>): Promise<string[]> {
  const kinds: string[] = [];
  const send = WebSocket.prototype.send;
  WebSocket.prototype.send = function (this: WebSocket, data: unknown, ...rest: never[]) {
    const message = JSON.parse(String(data)) as { type: string; request?: { type: string } };
    kinds.push(message.request?.type ?? message.type);
    return send.call(this, data as never, ...rest);
  } as typeof send;
  try {
    await action();
  } finally {
    WebSocket.prototype.send = send;
  }
  return kinds;
}

/** Each request names the kept stream's baton, and none closes it (a stream of its own would). */
function expectOnKeptStream(sent: readonly string[]): void {
  for (const body of sent) {
    const request = JSON.parse(body) as { baton?: unknown; requests: { type: string }[] };
    expect(typeof request.baton).toBe("string");
    expect(request.requests.map((r) => r.type)).not.toContain("close");
  }
}

/** An ordinary workspace step: one small file and its event, the callback reading answers. */
function ordinaryStep(lease: RunLease, n: number): Promise<unknown> {
  return lease.transact((tx) =>
    tx.workspace.apply({ put: { [`a/${n}.json`]: "{}" } }, { event: { step: n } }),
  );
}

describe("remote libSQL: round trips", () => {
  let next = 0;
  async function openRun(
    protocol: "http" | "ws" = "http",
  ): Promise<{ lease: RunLease; close: () => Promise<void> }> {
    const store = new RunStore({ driver: libsqlDriver({ adminUrl: server.adminUrl as string }) });
    const name = `trips-${++next}`;
    const url =
      protocol === "http" ? recorder.namespaceUrl(name) : server.namespaceUrl(name, protocol);
    const lease = await store.open(url, {
      create: { workflowId: "trips", runId: `run-${next}` },
    });
    // A first step, so the lease knows the newest event and the tree (as every later step does).
    await lease.transact((tx) => tx.workspace.apply({ put: { "a/0.json": "{}" } }));
    return { lease, close: () => store.close() };
  }

  it("an append is two requests: BEGIN with the insert, then COMMIT", async () => {
    const { lease, close } = await openRun();
    try {
      const sent = await requestsOf(() => lease.transact((tx) => tx.journal.append({ n: 1 })));
      expect(sent).toHaveLength(2);
      expect(sent[0]).toContain("BEGIN IMMEDIATE");
      expect(sent[0]).toContain("INSERT INTO journal");
      expect(sent[1]).toContain("COMMIT");
      expect(sent.join("\n")).not.toContain("SELECT 1");
    } finally {
      await close();
    }
  });

  it("a workspace step is two requests: its savepoint with the event, its tree nodes with COMMIT", async () => {
    const { lease, close } = await openRun();
    try {
      const sent = await requestsOf(() =>
        lease.transact((tx) =>
          tx.workspace.apply({ put: { "a/1.json": '{"step":1}' } }, { event: { step: 1 } }),
        ),
      );
      expect(sent).toHaveLength(2);
      for (const part of ["BEGIN IMMEDIATE", "SAVEPOINT runledger_sp_1", "INSERT INTO journal"]) {
        expect(sent[0]).toContain(part);
      }
      // The nodes' statement is named by the id the client gave its text the first time. A
      // RELEASE still held at COMMIT is not sent: COMMIT releases every savepoint.
      expect(sent[1]).toContain("COMMIT");
      expect(sent[1]).not.toContain("RELEASE");
      const events = await lease.read((r) => r.journal.list());
      expect(events.at(-1)?.record).toStrictEqual({ step: 1 });
      // The held-back nodes landed with the step: the new root reads, and the run verifies.
      const step = await lease.read((r) => r.workspace.read("a/1.json"));
      expect(new TextDecoder().decode(step)).toBe('{"step":1}');
      expect((await lease.verify()).ok).toBe(true);
    } finally {
      await close();
    }
  });

  it("an optimistic step on a lease that saw the newest event is one request: BEGIN, the event, its nodes, COMMIT", async () => {
    const { lease, close } = await openRun();
    try {
      const sent = await requestsOf(() =>
        lease.transact(
          (tx) => tx.workspace.apply({ put: { "a/1.json": '{"step":1}' } }, { event: { step: 1 } }),
          { optimistic: true },
        ),
      );
      expect(sent).toHaveLength(1);
      for (const part of ["BEGIN IMMEDIATE", "INSERT INTO journal", "COMMIT"]) {
        expect(sent[0]).toContain(part);
      }
      // Nothing could be undone alone inside one request: no savepoint is sent.
      expect(sent[0]).not.toContain("SAVEPOINT");
      const step = await lease.read((r) => r.workspace.read("a/1.json"));
      expect(new TextDecoder().decode(step)).toBe('{"step":1}');
      expect((await lease.verify()).ok).toBe(true);
    } finally {
      await close();
    }
  });

  it("over http, no request goes through the global fetch: ordinary and optimistic steps and reads go on node:http's kept sockets", async () => {
    const realFetch = globalThis.fetch;
    let fetched = 0;
    globalThis.fetch = (...args: Parameters<typeof fetch>) => {
      fetched += 1;
      return realFetch(...args);
    };
    try {
      const { lease, close } = await openRun();
      try {
        // (Creating the namespace, once, went through the admin API's fetch.)
        fetched = 0;
        const sent = await requestsOf(async () => {
          await lease.transact((tx) => tx.journal.append({ ordinary: true }));
          await lease.transact((tx) => tx.journal.append({ optimistic: true }), {
            optimistic: true,
          });
          await lease.read((r) => r.journal.list());
        });
        // The requests reached the server (the recorder saw them), none of them through fetch.
        expect(sent.length).toBeGreaterThanOrEqual(4);
        expect(fetched).toBe(0);
      } finally {
        await close();
      }
    } finally {
      globalThis.fetch = realFetch;
    }
  });

  it("over http, an optimistic step stores every value with the SQLite type an ordinary step gives it", async () => {
    const ordinary = await openRun();
    const optimistic = await openRun();
    try {
      const steps = (run: typeof ordinary, options: { optimistic?: boolean }) =>
        requestsOf(async () => {
          for (let n = 1; n < 4; n++) {
            await run.lease.transact(
              (tx) =>
                tx.workspace.apply({ put: { [`a/${n}.json`]: `{"n":${n}}` } }, { event: { n } }),
              options,
            );
          }
        });
      await steps(ordinary, {});
      // One request each: none was refused and written again the ordinary way.
      expect(await steps(optimistic, { optimistic: true })).toHaveLength(3);
      const types = await columnTypes(optimistic.lease.location);
      expect(types).toStrictEqual(await columnTypes(ordinary.lease.location));
      // What the comparison covers: the event's integers and text, the tree's blobs.
      const all = Object.values(types).flat().join(",");
      for (const type of ["integer", "text", "blob"]) expect(all).toContain(type);
    } finally {
      await optimistic.close();
      await ordinary.close();
    }
  });

  it("over ws, optimistic steps are one message each, on a stream kept open: none opened or closed for them", async () => {
    const { lease, close } = await openRun("ws");
    try {
      const step = (n: number) =>
        lease.transact(
          (tx) => tx.workspace.apply({ put: { [`a/${n}.json`]: "{}" } }, { event: { step: n } }),
          { optimistic: true },
        );
      // The first opens the kept stream (its socket's hello and stream).
      await step(1);
      const kinds = await messagesOf(async () => {
        for (let n = 2; n < 7; n++) await step(n);
      });
      // A SQL text not seen before is stored first (a step's node rows vary in number).
      expect(kinds.filter((kind) => kind !== "store_sql")).toStrictEqual([
        "batch",
        "batch",
        "batch",
        "batch",
        "batch",
      ]);
      const records = (await lease.read((r) => r.journal.list())).map((e) => e.record);
      expect(records).toHaveLength(7);
      expect((await lease.verify()).ok).toBe(true);
    } finally {
      await close();
    }
  });

  it("over ws, ordinary steps are held on the stream kept open: two batches each, no stream opened or closed for them", async () => {
    const { lease, close } = await openRun("ws");
    try {
      await ordinaryStep(lease, 1);
      const kinds = await messagesOf(async () => {
        for (let n = 2; n < 7; n++) await ordinaryStep(lease, n);
      });
      // Each step: BEGIN with its event, then COMMIT; a stream of its own would add open_stream
      // and close_stream, and a server connection, for every one (kept-transaction.ts says why not).
      expect(kinds.filter((kind) => kind !== "store_sql")).toStrictEqual(
        Array.from({ length: 10 }, () => "batch"),
      );
      const records = (await lease.read((r) => r.journal.list())).map((e) => e.record);
      expect(records).toHaveLength(7);
      expect((await lease.verify()).ok).toBe(true);
    } finally {
      await close();
    }
  });

  it("over ws to a server that speaks only Hrana 2, ordinary transactions stay on the client's streams (no condition keeps a held one inside its transaction), optimistic ones on the kept stream, and every step lands", async () => {
    const proxy = await startHrana2Proxy(Number(server.host.split(":")[1]));
    const store = new RunStore({ driver: libsqlDriver({ adminUrl: server.adminUrl as string }) });
    try {
      const lease = await store.open(proxy.namespaceUrl(`trips-hrana2-${++next}`), {
        create: { workflowId: "trips", runId: "hrana2" },
      });
      await ordinaryStep(lease, 1);
      const kinds = await messagesOf(async () => {
        await ordinaryStep(lease, 2);
        await lease.transact((tx) => tx.journal.append({ optimistic: 3 }), { optimistic: true });
        await ordinaryStep(lease, 4);
      });
      // Each ordinary step opens a stream of the client's and closes it; between them the
      // optimistic append is one batch on the kept stream.
      const sent = kinds.filter((kind) => kind !== "store_sql");
      expect(sent.filter((kind) => kind === "open_stream")).toHaveLength(2);
      expect(sent.filter((kind) => kind === "close_stream")).toHaveLength(2);
      expect(sent[0]).toBe("open_stream");
      const between = sent.slice(sent.indexOf("close_stream") + 1, sent.lastIndexOf("open_stream"));
      expect(between).toStrictEqual(["batch"]);
      expect(sent.at(-1)).toBe("close_stream");
      const events = await lease.read((r) => r.journal.list());
      expect(events.map((e) => e.sequence)).toStrictEqual([1, 2, 3, 4]);
      expect((await lease.verify()).ok).toBe(true);
    } finally {
      await store.close();
      await proxy.stop();
    }
  });

  it("over http to a server that speaks no Hrana 3 (its /v3 paths answer 404), ordinary transactions stay on the client's streams, optimistic ones go on the kept stream over version 2, and every step lands", async () => {
    const lacking = await recordHttpRequests(server, { lacking: /^\/v3/ });
    const store = new RunStore({ driver: libsqlDriver({ adminUrl: server.adminUrl as string }) });
    try {
      const lease = await store.open(lacking.namespaceUrl(`trips-v2-${++next}`), {
        create: { workflowId: "trips", runId: "v2" },
      });
      await ordinaryStep(lease, 1);
      const sent = await lacking.requestsOf(async () => {
        await ordinaryStep(lease, 2);
        await lease.transact((tx) => tx.journal.append({ optimistic: 3 }), { optimistic: true });
      });
      // The ordinary step on a stream of the client's: its first request names no baton. The
      // optimistic one on the kept stream, whose pipeline (v2) the recorder saw beside it.
      const first = JSON.parse(sent[0] as string) as { baton?: unknown };
      expect(first.baton ?? null).toBeNull();
      const optimistic = JSON.parse(sent.at(-1) as string) as { requests: { type: string }[] };
      expect(optimistic.requests.at(-1)?.type).toBe("batch");
      const events = await lease.read((r) => r.journal.list());
      expect(events.map((e) => e.sequence)).toStrictEqual([1, 2, 3]);
      expect((await lease.verify()).ok).toBe(true);
    } finally {
      await store.close();
      await lacking.stop();
    }
  });

  it("over http, ordinary steps are held on the stream kept open: two requests each, each naming one baton chain, none closing it", async () => {
    const { lease, close } = await openRun();
    try {
      await ordinaryStep(lease, 1);
      const sent = await requestsOf(async () => {
        for (let n = 2; n < 6; n++) await ordinaryStep(lease, n);
      });
      expect(sent).toHaveLength(8);
      expectOnKeptStream(sent);
      expect((await lease.verify()).ok).toBe(true);
    } finally {
      await close();
    }
  });

  it("over http, optimistic steps are one request each on a stream kept open: each names the stream's baton, none closes it", async () => {
    const { lease, close } = await openRun();
    try {
      const step = (n: number) =>
        lease.transact((tx) => tx.journal.append({ step: n }), { optimistic: true });
      // The first opens the kept stream.
      await step(1);
      const sent = await requestsOf(async () => {
        for (let n = 2; n < 6; n++) await step(n);
      });
      expect(sent).toHaveLength(4);
      expectOnKeptStream(sent);
    } finally {
      await close();
    }
  });

  it("an optimistic append is one request; a keyed one two (its key read first)", async () => {
    const { lease, close } = await openRun();
    try {
      const append = () =>
        lease.transact((tx) => tx.journal.append({ n: 1 }), { optimistic: true });
      expect(await requestsOf(append)).toHaveLength(1);
      const keyed = await requestsOf(() =>
        lease.transact((tx) => tx.journal.append({ n: 2 }), { key: "k", optimistic: true }),
      );
      expect(keyed).toHaveLength(2);
      expect(keyed[0]).toContain("run_transaction");
      expect(keyed[1]).toContain("COMMIT");
      const records = (await lease.read((r) => r.journal.list())).map((e) => e.record);
      expect(records.slice(-2)).toStrictEqual([{ n: 1 }, { n: 2 }]);
    } finally {
      await close();
    }
  });

  it("an optimistic step on a stale view is refused whole, then sent the ordinary way from the newest event: four requests, landed once", async () => {
    const { lease, close } = await openRun();
    const other = new RunStore({ driver: libsqlDriver({ adminUrl: server.adminUrl as string }) });
    try {
      const otherLease = await other.open(lease.location);
      await otherLease.transact((tx) => tx.journal.append({ by: "other" }));
      let calls = 0;
      const sent = await requestsOf(() =>
        lease.transact(
          (tx) => {
            calls += 1;
            return tx.workspace.apply({ put: { "a/1.json": "{}" } }, { event: { step: 1 } });
          },
          { optimistic: true },
        ),
      );
      expect(calls).toBe(2);
      // The whole transaction, refused; then the newest event read, the event, COMMIT.
      expect(sent).toHaveLength(4);
      expect(sent[0]).toContain("COMMIT");
      expect(sent[1]).toContain("BEGIN IMMEDIATE");
      expect(sent[1]).not.toContain("INSERT INTO journal");
      expect(sent[2]).toContain("INSERT INTO journal");
      expect(sent[3]).toContain("COMMIT");
      const records = (await lease.read((r) => r.journal.list())).map((e) => e.record);
      expect(records.slice(-2)).toStrictEqual([{ by: "other" }, { step: 1 }]);
      expect((await lease.verify()).ok).toBe(true);
    } finally {
      await other.close();
      await close();
    }
  });

  it("a savepoint whose body wrote nothing sends nothing, and one that failed is undone on the server", async () => {
    const { lease, close } = await openRun();
    try {
      const empty = await requestsOf(() => lease.transact((tx) => tx.savepoint(async () => 1)));
      expect(empty).toHaveLength(0);
      const outcome = await lease.transact(async (tx) => {
        const refused = await tx
          .savepoint(async (inner) => {
            await inner.journal.append({ undone: true });
            throw new Error("give up");
          })
          .catch((error: Error) => error.message);
        await tx.journal.append({ kept: true });
        return refused;
      });
      expect(outcome).toBe("give up");
      const records = (await lease.read((r) => r.journal.list())).map((e) => e.record);
      expect(records.slice(-1)).toStrictEqual([{ kept: true }]);
      expect(records).not.toContainEqual({ undone: true });
    } finally {
      await close();
    }
  });

  it("a held-back statement that fails ends its transaction: the next call or COMMIT fails with its error, and nothing of the transaction lands", async () => {
    const { lease, close } = await openRun();
    try {
      const count = async () =>
        Number(
          (await lease.lease.read((scope) => scope.execute("SELECT count(*) AS n FROM journal")))
            .rows[0]?.n,
        );
      const before = await count();
      // Failing at COMMIT: the batch stops there, and COMMIT never runs.
      const atCommit = await lease.lease
        .transact(async (scope) => {
          await scope.execute("INSERT INTO journal_anchor (singleton) VALUES (7)", [], {
            later: true,
          });
        })
        .catch((error: unknown) => error);
      expect(isRunledgerError(atCommit)).toBe(true);
      // Failing at the next statement: that call fails, and catching it does not let the transaction commit.
      const atNext = await lease.lease
        .transact(async (scope) => {
          // A row that would land if the transaction committed.
          await scope.execute(
            "INSERT INTO journal_anchor (singleton, sequence, digest) VALUES (1, 1, zeroblob(32))",
          );
          await scope.execute("INSERT INTO journal_anchor (singleton) VALUES (7)", [], {
            later: true,
          });
          await scope.execute("SELECT 1").catch(() => undefined);
          await scope.execute("SELECT 2").catch(() => undefined);
        })
        .catch((error: unknown) => error);
      expect(isRunledgerError(atNext)).toBe(true);
      expect(await count()).toBe(before);
      const anchors = await lease.lease.read((scope) =>
        scope.execute("SELECT count(*) AS n FROM journal_anchor"),
      );
      expect(Number(anchors.rows[0]?.n)).toBe(0);
      // The lease goes on.
      await lease.transact((tx) => tx.journal.append({ after: true }));
      expect(await count()).toBe(before + 1);
    } finally {
      await close();
    }
  });
});

/** Each table's rows in the database at `url`, as the SQLite types of their columns (sorted). */
async function columnTypes(url: string): Promise<Record<string, string[]>> {
  const client = createClient({ url });
  try {
    const tables = await client.execute(
      "SELECT name FROM sqlite_schema WHERE type = 'table' AND name NOT LIKE 'sqlite_%' ORDER BY name",
    );
    const types: Record<string, string[]> = {};
    for (const { name } of tables.rows) {
      const columns = await client.execute(`SELECT name FROM pragma_table_info('${String(name)}')`);
      const typeofs = columns.rows
        .map((column) => `typeof("${String(column.name)}")`)
        .join(" || ',' || ");
      const rows = await client.execute(`SELECT ${typeofs} AS types FROM "${String(name)}"`);
      types[String(name)] = rows.rows.map((row) => String(row.types)).sort();
    }
    return types;
  } finally {
    client.close();
  }
}
