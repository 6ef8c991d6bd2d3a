/**
 * Credentials against a real sqld: the admin API's key (`--admin-auth-key`)
 * sent the way sqld accepts it, read-only JWTs that open runs read-only and
 * refuse writes with their own answer, and no token ever repeated in an
 * error's message, details or cause.
 */
import { generateKeyPairSync, sign } from "node:crypto";
import { libsqlDriver } from "@runledger/adapter-libsql";
import { resolveLocalhostSubdomains, startSqld } from "@runledger/conformance/sqld";
import { type RunledgerError, RunStore } from "@runledger/core";
import { afterAll, describe, expect, it } from "vitest";
import { failureOf } from "./support/failures.js";

const CREATE = { workflowId: "remote-credentials", runId: "run-1" };

/** Every string an error shows: its message, its details, and its causes' messages and fields. */
function everythingShown(error: unknown): string {
  const seen: string[] = [];
  for (let e = error, depth = 0; e !== undefined && e !== null && depth < 8; depth++) {
    if (e instanceof Error) seen.push(e.message, e.stack ?? "");
    try {
      seen.push(JSON.stringify(e));
    } catch {
      seen.push(String(e));
    }
    seen.push(JSON.stringify((e as { details?: unknown }).details ?? null));
    seen.push(String((e as { input?: unknown }).input ?? ""));
    e = (e as { cause?: unknown }).cause;
  }
  return seen.join("\n");
}

resolveLocalhostSubdomains();

describe("remote libSQL: an admin API that wants a key (--admin-auth-key)", async () => {
  const adminAuthKey = `admin-key-${process.pid}`;
  const server = await startSqld({ namespaces: true, adminAuthKey });
  afterAll(() => server.stop());
  const adminUrl = server.adminUrl as string;

  it("creates a run's namespace through adminUrl with adminAuthKey, and removes it again", async () => {
    const location = server.namespaceUrl(`key${process.pid}`, "ws");
    const store = new RunStore({ driver: libsqlDriver({ adminUrl, adminAuthKey }) });
    try {
      const lease = await store.open(location, { create: CREATE });
      await lease.transact((tx) => tx.journal.append({ created: true }));
      await lease.release();
      await store.remove(location);
      const gone = await failureOf(() => store.open(location));
      expect([gone.code, (gone.cause as RunledgerError).details]).toStrictEqual([
        "not_found",
        { missing: "namespace" },
      ]);
    } finally {
      await store.close();
    }
  });

  it("refuses a wrong admin key, or none, with auth_refused naming the admin key (not authToken), and creates nothing", async () => {
    const location = server.namespaceUrl(`nokey${process.pid}`, "http");
    for (const driverOptions of [{ adminUrl, adminAuthKey: "not-the-key" }, { adminUrl }]) {
      const store = new RunStore({ driver: libsqlDriver(driverOptions) });
      try {
        const failure = await failureOf(() => store.open(location, { create: CREATE }));
        expect({ code: failure.code, message: failure.message }).toMatchObject({
          code: "auth_refused",
          message: expect.stringMatching(/admin.*adminAuthKey/),
        });
        expect(failure.message).not.toMatch(/authToken/);
        expect(everythingShown(failure)).not.toContain("not-the-key");
      } finally {
        await store.close();
      }
    }
    const store = new RunStore({ driver: libsqlDriver({ adminUrl, adminAuthKey }) });
    try {
      const missing = await failureOf(() => store.open(location));
      expect([missing.code, (missing.cause as RunledgerError).details]).toStrictEqual([
        "not_found",
        { missing: "namespace" },
      ]);
    } finally {
      await store.close();
    }
  });
});

describe("remote libSQL: read-only tokens (a JWT whose a claim is ro)", async () => {
  const { publicKey, privateKey } = generateKeyPairSync("ed25519");
  const jwtPublicKey = publicKey.export({ format: "jwk" }).x as string;
  const part = (value: object) => Buffer.from(JSON.stringify(value)).toString("base64url");
  const tokenFor = (access: "rw" | "ro") => {
    const unsigned = `${part({ alg: "EdDSA", typ: "JWT" })}.${part({ a: access })}`;
    return `${unsigned}.${sign(null, Buffer.from(unsigned), privateKey).toString("base64url")}`;
  };
  const readWrite = tokenFor("rw");
  const readOnly = tokenFor("ro");
  const server = await startSqld({ jwtPublicKey });
  afterAll(() => server.stop());

  it("writes with a read-write token, then reads everything with a read-only one opened { readOnly: true }, over http and ws", async () => {
    const writer = new RunStore({ driver: libsqlDriver({ authToken: readWrite }) });
    try {
      const lease = await writer.open(server.url("http"), { create: CREATE });
      await lease.transact((tx) =>
        tx.workspace.apply({ put: { "a.txt": "written" } }, { event: { step: 1 } }),
      );
    } finally {
      await writer.close();
    }
    for (const protocol of ["http", "ws"] as const) {
      const store = new RunStore({ driver: libsqlDriver({ authToken: readOnly }) });
      try {
        const lease = await store.open(server.url(protocol), { readOnly: true });
        const events = await lease.read((r) => r.journal.list({ limit: 100 }));
        expect([protocol, events.map((e) => e.record)]).toStrictEqual([protocol, [{ step: 1 }]]);
        const text = await lease.read((r) => r.workspace.read("a.txt"));
        expect(new TextDecoder().decode(text)).toBe("written");
        const write = await failureOf(() => lease.transact((tx) => tx.journal.append({ no: 1 })));
        expect(write.code, write.message).toBe("read_only");
      } finally {
        await store.close();
      }
    }
  });

  it("refuses a writable open under a read-only token with read_only saying the token is read-only, over http and ws, and writes nothing", async () => {
    for (const protocol of ["http", "ws"] as const) {
      const store = new RunStore({ driver: libsqlDriver({ authToken: readOnly }) });
      try {
        const failure = await failureOf(() => store.open(server.url(protocol)));
        expect({ protocol, code: failure.code, message: failure.message }).toMatchObject({
          protocol,
          code: "read_only",
          message: expect.stringMatching(/token is read-only.*readOnly: true/),
        });
        expect(failure.details).toStrictEqual({ token: "read-only" });
        expect(everythingShown(failure)).not.toContain(readOnly);
      } finally {
        await store.close();
      }
    }
    const reader = new RunStore({ driver: libsqlDriver({ authToken: readWrite }) });
    try {
      const lease = await reader.open(server.url("ws"), { readOnly: true });
      const events = await lease.read((r) => r.journal.list({ limit: 100 }));
      expect(events.map((e) => e.record)).toStrictEqual([{ step: 1 }]);
    } finally {
      await reader.close();
    }
  });
  // Last of its describe: it adds events to the run the tests above read.
  it("lands optimistic steps with a read-write token over http and ws: the kept stream that sends them carries the token", async () => {
    for (const protocol of ["http", "ws"] as const) {
      const store = new RunStore({ driver: libsqlDriver({ authToken: readWrite }) });
      try {
        const lease = await store.open(server.url(protocol), { create: CREATE });
        const before = (await lease.read((r) => r.journal.list({ limit: 1_000 }))).length;
        // The first reads the newest event; the next ones go whole, on the kept stream. One the
        // server refused there would run again the ordinary way: each callback runs once.
        let calls = 0;
        for (let n = 0; n < 3; n++) {
          await lease.transact(
            (tx) => {
              calls += 1;
              return tx.journal.append({ protocol, n });
            },
            { optimistic: true },
          );
        }
        expect([protocol, calls]).toStrictEqual([protocol, 3]);
        const events = await lease.read((r) => r.journal.list({ limit: 1_000 }));
        expect(events.slice(before).map((e) => e.record)).toStrictEqual(
          [0, 1, 2].map((n) => ({ protocol, n })),
        );
      } finally {
        await store.close();
      }
    }
  });
});

describe("remote libSQL: a token in the URL", () => {
  const secret = "eyJhbGciOiJFZERTQSJ9.c2VjcmV0LXRva2Vu.c2lnbmF0dXJl";
  for (const location of [
    `http://127.0.0.1:8080?authToken=${secret}`,
    `ws://user:${secret}@127.0.0.1:8080`,
    `libsql://${secret}@db.example.com`,
    `ws://user:${secret}@[not-a-host`,
  ]) {
    it(`is refused without the token in the message, details or cause: ${location.replace(secret, "TOKEN")}`, async () => {
      const store = new RunStore({ driver: libsqlDriver() });
      try {
        const failure = await failureOf(() => store.open(location, { create: CREATE }));
        expect(failure.code, failure.message).toBe("invalid_location");
        expect(failure.message).toMatch(/REDACTED|not a valid URL/);
        expect(everythingShown(failure)).not.toContain(secret);
      } finally {
        await store.close();
      }
    });
  }
});
