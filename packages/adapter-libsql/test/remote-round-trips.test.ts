/**
 * Round trips on a libSQL server: a transaction reaches the server in as few
 * requests as the protocol allows (docs/remote.md). Counted over http, where
 * each request is a fetch this test sees: BEGIN goes with the first
 * statement (the write lock taken there), core's SAVEPOINT and RELEASE with
 * the statements around them, and what a savepoint held back is never sent
 * when nothing else was. The stream's close is sent after COMMIT without
 * waiting for its answer, so it is not counted.
 */
import { libsqlDriver } from "@runledger/adapter-libsql";
import { resolveLocalhostSubdomains, startSqld } from "@runledger/conformance/sqld";
import { type RunLease, RunStore } from "@runledger/core";
import { afterAll, describe, expect, it } from "vitest";

resolveLocalhostSubdomains();
const server = await startSqld({ namespaces: true });
afterAll(() => server.stop());

/**
 * Every request the clients of this file send goes through here (a client
 * takes the global fetch when it is made): while `recording` is set, each
 * request's body is kept, close-only requests left out.
 */
let recording: string[] | undefined;
const realFetch = globalThis.fetch;
globalThis.fetch = async (input, init) => {
  if (recording !== undefined) {
    const body = input instanceof Request ? await input.clone().text() : String(init?.body ?? "");
    if (!/^\{("baton":"[^"]*",)?"requests":\[\{"type":"close"\}\]\}$/.test(body)) {
      recording.push(body);
    }
  }
  return realFetch(input, init);
};
afterAll(() => {
  globalThis.fetch = realFetch;
});

/** The bodies of the requests sent to the server while `action` runs. */
async function requestsOf(action: () => Promise<unknown>): Promise<string[]> {
  const sent: string[] = [];
  recording = sent;
  try {
    await action();
  } finally {
    recording = undefined;
  }
  return sent;
}

describe("remote libSQL: round trips", () => {
  let next = 0;
  async function openRun(): Promise<{ lease: RunLease; close: () => Promise<void> }> {
    const store = new RunStore({ driver: libsqlDriver({ adminUrl: server.adminUrl as string }) });
    const lease = await store.open(server.namespaceUrl(`trips-${++next}`, "http"), {
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

  it("a workspace step is at most three requests, its savepoint sent with the event and released with COMMIT", async () => {
    const { lease, close } = await openRun();
    try {
      const sent = await requestsOf(() =>
        lease.transact((tx) =>
          tx.workspace.apply({ put: { "a/1.json": '{"step":1}' } }, { event: { step: 1 } }),
        ),
      );
      expect(sent.length).toBeLessThanOrEqual(3);
      for (const part of ["BEGIN IMMEDIATE", "SAVEPOINT runledger_sp_1", "INSERT INTO journal"]) {
        expect(sent[0]).toContain(part);
      }
      expect(sent.at(-1)).toContain("RELEASE runledger_sp_1");
      expect(sent.at(-1)).toContain("COMMIT");
      const events = await lease.read((r) => r.journal.list());
      expect(events.at(-1)?.record).toStrictEqual({ step: 1 });
    } finally {
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
});
