/**
 * Encryption at rest for local files (`libsqlDriver({ encryptionKey })`, as
 * @libsql/client provides it): what lands on disk is not plain SQLite, the
 * run reads back with the key, and an open without the key or with another
 * is refused with its own code and leaves the file byte-for-byte as found.
 */
import { createHash } from "node:crypto";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import { createClient } from "@libsql/client";
import { libsqlDriver } from "@runledger/adapter-libsql";
import { RunStore } from "@runledger/core";
import { afterAll, describe, expect, it } from "vitest";
import { failureOf } from "./support/failures.js";

const CREATE = { workflowId: "encryption", runId: "run-1" };
const directory = mkdtempSync(join(tmpdir(), "runledger-encryption-"));
afterAll(() => rmSync(directory, { recursive: true, force: true }));

const digest = (path: string) => createHash("sha256").update(readFileSync(path)).digest("hex");

describe("adapter-libsql: encryptionKey for local files", () => {
  it("writes a file that is not plain SQLite and reads it back with the same key", async () => {
    const path = join(directory, "encrypted.db");
    const store = new RunStore({ driver: libsqlDriver({ encryptionKey: "key-one" }) });
    try {
      const lease = await store.open(path, { create: CREATE });
      await lease.transact((tx) =>
        tx.workspace.apply({ put: { "secret.txt": "plain text here" } }, { event: { step: 1 } }),
      );
    } finally {
      await store.close();
    }
    const bytes = readFileSync(path);
    expect(bytes.subarray(0, 16).toString("latin1")).not.toBe("SQLite format 3\0");
    expect(bytes.includes(Buffer.from("plain text here"))).toBe(false);
    const again = new RunStore({ driver: libsqlDriver({ encryptionKey: "key-one" }) });
    try {
      const lease = await again.open(path);
      const text = await lease.read((r) => r.workspace.read("secret.txt"));
      expect(new TextDecoder().decode(text)).toBe("plain text here");
      const readOnly = await again.open(path, { readOnly: true });
      const events = await readOnly.read((r) => r.journal.list({ limit: 10 }));
      expect(events.map((e) => e.record)).toStrictEqual([{ step: 1 }]);
    } finally {
      await again.close();
    }
  });

  it("opens a file @libsql/client encrypted with the same key (as the adapter wrote local files before 2026-12-05)", async () => {
    const path = join(directory, "by-client.db");
    const client = createClient({ url: pathToFileURL(path).href, encryptionKey: "client-key" });
    await client.executeMultiple(
      "CREATE TABLE note (text TEXT NOT NULL); INSERT INTO note VALUES ('written by the client')",
    );
    client.close();
    expect(readFileSync(path).subarray(0, 16).toString("latin1")).not.toBe("SQLite format 3\0");
    const connection = await libsqlDriver({ encryptionKey: "client-key" }).open(path, {
      create: false,
      readOnly: false,
      busyTimeoutMs: 1000,
    });
    try {
      const { rows } = await connection.execute("SELECT text FROM note");
      expect(rows).toStrictEqual([{ text: "written by the client" }]);
    } finally {
      await connection.close();
    }
  });

  it("refuses an open with another key (encryption_key_refused) or none (not_a_database), changing nothing", async () => {
    const path = join(directory, "refused.db");
    const store = new RunStore({ driver: libsqlDriver({ encryptionKey: "right-key" }) });
    try {
      const lease = await store.open(path, { create: CREATE });
      await lease.transact((tx) => tx.journal.append({ step: 1 }));
    } finally {
      await store.close();
    }
    const before = digest(path);
    for (const [options, code] of [
      [{ encryptionKey: "wrong-key" }, "encryption_key_refused"],
      [{}, "not_a_database"],
    ] as const) {
      for (const open of [{}, { create: CREATE }, { readOnly: true }]) {
        const other = new RunStore({ driver: libsqlDriver(options) });
        try {
          const failure = await failureOf(() => other.open(path, open));
          expect({ code: failure.code, message: failure.message }).toMatchObject({
            code,
            message: expect.stringMatching(
              code === "encryption_key_refused" ? /encryptionKey/ : /another format/,
            ),
          });
          expect(failure.message).not.toContain("right-key");
          expect(failure.message).not.toContain("wrong-key");
        } finally {
          await other.close();
        }
        expect(digest(path)).toBe(before);
      }
    }
  });

  it("refuses a plain file opened with a key, and a key for a remote location, and an empty key", async () => {
    const path = join(directory, "plain.db");
    const plain = new RunStore({ driver: libsqlDriver() });
    try {
      await plain.open(path, { create: CREATE });
    } finally {
      await plain.close();
    }
    const before = digest(path);
    const keyed = new RunStore({ driver: libsqlDriver({ encryptionKey: "key" }) });
    try {
      const failure = await failureOf(() => keyed.open(path));
      expect(failure.code, failure.message).toBe("encryption_key_refused");
      expect(digest(path)).toBe(before);
      const remote = await failureOf(() => keyed.open("http://127.0.0.1:1"));
      expect([remote.code, remote.message]).toStrictEqual([
        "invalid_argument",
        expect.stringMatching(/encrypts local files only/),
      ]);
    } finally {
      await keyed.close();
    }
    expect(() => libsqlDriver({ encryptionKey: "" })).toThrow(/non-empty string/);
  });
});
