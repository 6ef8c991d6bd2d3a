/**
 * What a libSQL server does that a local file does not, each failure with its
 * own code (docs/errors.md), proved against a real sqld: the write lock taken
 * away after 5 s (the transaction fails whole), the idle HTTP stream that
 * expires, the server that is not there, the refused token, the missing
 * namespace, a busy server waited out for the store's whole deadline; and
 * the `libsql://…?tls=0` spelling of a location.
 */
import { generateKeyPairSync, sign } from "node:crypto";
import { createClient } from "@libsql/client";
import { libsqlDriver } from "@runledger/adapter-libsql";
import {
  freePort,
  resolveLocalhostSubdomains,
  type SqldServer,
  startSqld,
} from "@runledger/conformance/sqld";
import { type RunLease, type RunledgerError, RunStore } from "@runledger/core";
import { afterAll, describe, expect, it } from "vitest";
import { failureOf } from "./support/failures.js";

const CREATE = { workflowId: "remote-failures", runId: "run-1" };
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

async function events(lease: RunLease) {
  return lease.read((r) => r.journal.list({ limit: 10_000 }));
}

resolveLocalhostSubdomains();
/**
 * Three optimistic appends on `lease`, `between` run after the second; all
 * three land, in order. How many times their callbacks ran.
 */
async function stepsAround(lease: RunLease, between: () => Promise<unknown>): Promise<number> {
  let calls = 0;
  const step = (n: number) =>
    lease.transact(
      (tx) => {
        calls += 1;
        return tx.journal.append({ n });
      },
      { optimistic: true },
    );
  await step(1);
  await step(2);
  await between();
  await step(3);
  expect((await events(lease)).map((e) => e.record)).toStrictEqual([{ n: 1 }, { n: 2 }, { n: 3 }]);
  return calls;
}

/**
 * A new run on a server of its own, which `body` may crash and restart; the
 * store and the server are closed afterwards.
 */
async function onOwnServer(
  protocol: "http" | "ws",
  name: string,
  body: (dying: SqldServer, lease: RunLease) => Promise<void>,
): Promise<void> {
  const dying = await startSqld({ namespaces: true });
  const store = new RunStore({ driver: libsqlDriver({ adminUrl: dying.adminUrl as string }) });
  try {
    const location = dying.namespaceUrl(`${name}${process.pid}n${++next}`, protocol);
    await body(dying, await store.open(location, { create: CREATE }));
  } finally {
    await store.close();
    await dying.stop();
  }
}

const server = await startSqld({ namespaces: true });
afterAll(() => server.stop());
let next = 0;
const fresh = (protocol: "http" | "ws" | "libsql") =>
  server.namespaceUrl(`f${process.pid}n${++next}`, protocol);
const driver = () => libsqlDriver({ adminUrl: server.adminUrl as string });

describe("remote libSQL: failures a server adds", () => {
  for (const protocol of ["http", "ws"] as const) {
    it(`over ${protocol}: a transaction whose write lock the server takes away (5 s, another writer waiting) fails whole with transaction_timeout; the other writer's event lands alone`, async () => {
      const location = fresh(protocol);
      const slowStore = new RunStore({ driver: driver() });
      const otherStore = new RunStore({ driver: driver() });
      try {
        const slow = await slowStore.open(location, { create: CREATE });
        const other = await otherStore.open(location, { create: CREATE });
        await slow.transact((tx) => tx.journal.append({ before: true }));
        let otherWrote: Promise<unknown> | undefined;
        const failure = await failureOf(() =>
          slow.transact(async (tx) => {
            await tx.journal.append({ slow: 1 });
            await tx.workspace.apply(
              { put: { "slow.txt": "never lands" } },
              { event: { slow: 2 } },
            );
            otherWrote = other.transact((otherTx) => otherTx.journal.append({ other: true }));
            await sleep(6_500);
            await tx.journal.append({ slow: 3 });
          }),
        );
        expect(failure.code).toBe("transaction_timeout");
        expect(failure.message).toMatch(/retry/i);
        await otherWrote;
        const journal = await events(other);
        expect(journal.map((e) => e.record)).toStrictEqual([{ before: true }, { other: true }]);
        expect(journal.map((e) => e.sequence)).toStrictEqual([1, 2]);
        await expect(other.read((r) => r.workspace.list())).resolves.toStrictEqual([]);
        // The run goes on: the slow writer's next transaction lands.
        await slow.transact((tx) => tx.journal.append({ retried: true }));
        expect((await events(other)).map((e) => e.sequence)).toStrictEqual([1, 2, 3]);
      } finally {
        await slowStore.close();
        await otherStore.close();
      }
    }, 30_000);
  }

  for (const protocol of ["http", "ws"] as const) {
    it(`over ${protocol}: a transaction the server answers busy waits for the store's whole busyTimeoutMs (not the driver's 100 ms slice), and lands once the lock is free`, async () => {
      const name = `busy${process.pid}n${++next}`;
      const location = server.namespaceUrl(name, protocol);
      const impatient = new RunStore({ driver: driver(), busyTimeoutMs: 300 });
      const patient = new RunStore({ driver: driver(), busyTimeoutMs: 60_000 });
      try {
        const created = await patient.open(location, { create: CREATE });
        // Another writer the server must wait for: its database file's lock, taken from outside.
        const outside = createClient({ url: `file:${server.databaseFile(name)}` });
        const lock = await outside.transaction("write");
        try {
          const refused = await failureOf(async () => {
            const lease = await impatient.open(location);
            await lease.transact((tx) => tx.journal.append({ impatient: true }));
          });
          expect(refused.code, refused.message).toBe("busy");
          expect(refused.message).toMatch(/deadline 300 ms/);
          const landed = created.transact((tx) => tx.journal.append({ patient: true }));
          // Held ten times the driver's slice (longer on a loaded machine, which only proves more).
          await sleep(1_000);
          await lock.commit();
          await expect(landed).resolves.toMatchObject({ sequence: 1 });
        } finally {
          lock.close();
          outside.close();
        }
        expect((await events(created)).map((e) => e.record)).toStrictEqual([{ patient: true }]);
      } finally {
        await impatient.close();
        await patient.close();
      }
    }, 120_000);
  }

  for (const protocol of ["http", "ws"] as const) {
    it(`over ${protocol}: a server that dies mid-transaction fails it with the remote code, not poisoned; nothing of it lands, and the same lease's next transaction works once the server is back`, async () => {
      await onOwnServer(protocol, "dies", async (dying, lease) => {
        await lease.transact((tx) => tx.journal.append({ before: true }));
        const failure = await failureOf(() =>
          lease.transact(async (tx) => {
            await tx.journal.append({ lost: 1 });
            // The savepoint's undo finds the transaction gone with the server.
            await tx.savepoint(async (inner) => {
              await inner.workspace.apply({ put: { "lost.txt": "never lands" } });
              await dying.crash();
              await inner.journal.append({ lost: 2 });
            });
          }),
        );
        expect(failure.code, failure.message).toBe(
          protocol === "http" ? "server_unreachable" : "connection_lost",
        );
        await dying.restart();
        await lease.transact((tx) => tx.journal.append({ after: true }));
        expect((await events(lease)).map((e) => e.record)).toStrictEqual([
          { before: true },
          { after: true },
        ]);
        await expect(lease.read((r) => r.workspace.list())).resolves.toStrictEqual([]);
      });
    }, 60_000);
  }

  for (const protocol of ["http", "ws"] as const) {
    it(`over ${protocol}: an optimistic transaction whose server is gone at its COMMIT is commit_unknown, and its callback is not run again`, async () => {
      await onOwnServer(protocol, "gone", async (dying, lease) => {
        await lease.transact((tx) => tx.journal.append({ before: true }));
        let calls = 0;
        const failure = await failureOf(() =>
          lease.transact(
            async (tx) => {
              calls += 1;
              // Sent with COMMIT, which finds no server: whether it landed is unknown to the client.
              await tx.workspace.apply({ put: { "lost.txt": "never lands" } }, { event: { n: 1 } });
              if (calls === 1) await dying.crash();
            },
            { optimistic: true },
          ),
        );
        expect(failure.code, failure.message).toBe("commit_unknown");
        expect(calls).toBe(1);
        await dying.restart();
        expect((await events(lease)).map((e) => e.record)).toStrictEqual([{ before: true }]);
      });
    }, 60_000);
  }

  for (const protocol of ["ws", "http"] as const) {
    it(`over ${protocol}: after the server restarts, the next optimistic step opens a new kept stream and lands once`, async () => {
      await onOwnServer(protocol, "kept", async (dying, lease) => {
        // The kept stream dies with the server (over ws its socket closes; over http the server
        // no longer knows its baton and refuses it before running anything): the step after the
        // restart lands on a new one, its callback run once.
        const calls = await stepsAround(lease, async () => {
          await dying.crash();
          await dying.restart();
        });
        expect(calls).toBe(3);
      });
    }, 60_000);
  }

  it("over http: a kept stream idle past the server's limit is replaced, and the next optimistic step lands once", async () => {
    const store = new RunStore({ driver: driver() });
    try {
      const lease = await store.open(fresh("http"), { create: CREATE });
      // The kept stream's baton expires on the server (sqld: about 10 s idle); the batch it
      // refuses is sent again on a new stream, so no callback runs twice.
      const calls = await stepsAround(lease, () => sleep(11_500));
      expect(calls).toBe(3);
    } finally {
      await store.close();
    }
  }, 60_000);

  it("an HTTP stream idle past the server's limit fails stream_expired and commits nothing; a WebSocket one does not expire", async () => {
    const outcomes = await Promise.all(
      (["http", "ws"] as const).map(async (protocol) => {
        const store = new RunStore({ driver: driver() });
        try {
          const lease = await store.open(fresh(protocol), { create: CREATE });
          const outcome = await lease
            .transact(async (tx) => {
              await tx.journal.append({ first: true });
              await sleep(11_500);
              await tx.journal.append({ second: true });
            })
            .then(
              () => "committed",
              (error: RunledgerError) => error.code,
            );
          return { outcome, events: (await events(lease)).length };
        } finally {
          await store.close();
        }
      }),
    );
    expect(outcomes).toStrictEqual([
      { outcome: "stream_expired", events: 0 },
      { outcome: "committed", events: 2 },
    ]);
  }, 40_000);

  it("a server that is not there fails server_unreachable, over http and ws", async () => {
    const port = await freePort();
    for (const url of [`http://127.0.0.1:${port}`, `ws://127.0.0.1:${port}`]) {
      const store = new RunStore({ driver: libsqlDriver() });
      const failure = await failureOf(() => store.open(url, { create: CREATE }));
      expect([url, failure.code]).toStrictEqual([url, "server_unreachable"]);
      expect(failure.message).toMatch(/check that it runs/);
      await store.close();
    }
  });

  it("a database (namespace) that does not exist is not_found without create, as a missing file is (the driver's cannot_open its cause), over http and ws", async () => {
    for (const protocol of ["http", "ws"] as const) {
      const store = new RunStore({ driver: driver() });
      const failure = await failureOf(() => store.open(fresh(protocol)));
      const cause = failure.cause as RunledgerError;
      expect([protocol, failure.code, cause.code, cause.details]).toStrictEqual([
        protocol,
        "not_found",
        "cannot_open",
        { missing: "namespace" },
      ]);
      await store.close();
    }
  });

  it("a write inside lease.read never lands on a server (the read is rolled back), and a read-only connection refuses one with read_only", async () => {
    const location = fresh("ws");
    const store = new RunStore({ driver: driver() });
    try {
      const lease = await store.open(location, { create: CREATE });
      await lease.lease.read((scope) => scope.execute("CREATE TABLE scratch (x)"));
      const { rows } = await lease.lease.read((scope) =>
        scope.execute("SELECT count(*) AS n FROM sqlite_schema WHERE name = 'scratch'"),
      );
      expect(rows[0]?.n).toBe(0);
    } finally {
      await store.close();
    }
    const writer = await driver().open(location, {
      create: false,
      readOnly: false,
      busyTimeoutMs: 1000,
    });
    const reader = await driver().open(location, {
      create: false,
      readOnly: true,
      busyTimeoutMs: 1000,
    });
    try {
      await writer.executeScript("CREATE TABLE item (x); INSERT INTO item VALUES (1);");
      const failure = await failureOf(() => reader.execute("DELETE FROM item"));
      expect([failure.code, failure.sqliteCode]).toStrictEqual(["read_only", "SQLITE_READONLY"]);
      const { rows } = await reader.execute("SELECT count(*) AS n FROM item");
      expect(rows[0]?.n).toBe(1);
    } finally {
      await reader.close();
      await writer.close();
    }
  });

  it("runs the run API over libsql://…?tls=0 (WebSocket underneath)", async () => {
    const store = new RunStore({ driver: driver() });
    try {
      const lease = await store.open(fresh("libsql"), { create: CREATE });
      await lease.transact((tx) =>
        tx.workspace.apply({ put: { "a/b.txt": "hello" } }, { event: { step: 1 } }),
      );
      const text = await lease.read((r) => r.workspace.read("a/b.txt"));
      expect(new TextDecoder().decode(text)).toBe("hello");
      expect((await events(lease)).map((e) => e.record)).toStrictEqual([{ step: 1 }]);
    } finally {
      await store.close();
    }
  });
});

describe("remote libSQL: a server that wants a token (--auth-jwt-key-file)", async () => {
  const { publicKey, privateKey } = generateKeyPairSync("ed25519");
  const jwtPublicKey = publicKey.export({ format: "jwk" }).x as string;
  const part = (value: object) => Buffer.from(JSON.stringify(value)).toString("base64url");
  const unsigned = `${part({ alg: "EdDSA", typ: "JWT" })}.${part({ a: "rw" })}`;
  const token = `${unsigned}.${sign(null, Buffer.from(unsigned), privateKey).toString("base64url")}`;
  const secured = await startSqld({ jwtPublicKey });
  afterAll(() => secured.stop());

  for (const protocol of ["http", "ws"] as const) {
    it(`over ${protocol}: refuses a missing or wrong token with auth_refused, and opens with the right one`, async () => {
      for (const authToken of [undefined, `${unsigned}.not-a-signature`]) {
        const store = new RunStore({ driver: libsqlDriver(authToken ? { authToken } : {}) });
        const failure = await failureOf(() =>
          store.open(secured.url(protocol), { create: CREATE }),
        );
        // The message is in the comparison, so a wrong code shows what failed instead.
        expect({ code: failure.code, message: failure.message }).toMatchObject({
          code: "auth_refused",
          message: expect.stringMatching(/authToken/),
        });
        await store.close();
      }
      const store = new RunStore({ driver: libsqlDriver({ authToken: token }) });
      try {
        const lease = await store.open(secured.url(protocol), { create: CREATE });
        await lease.transact((tx) => tx.journal.append({ protocol }));
        expect((await events(lease)).map((e) => e.record)).toContainEqual({ protocol });
      } finally {
        await store.close();
      }
    });
  }
});
