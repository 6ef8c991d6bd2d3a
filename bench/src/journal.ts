/**
 * A journal-sized write workload and the three ways the bench runs it: raw
 * better-sqlite3, raw @libsql/client, and any driver through the port. Later
 * suites (e.g. `lease`) reuse the raw sessions as their baselines; `throughLease`
 * runs the workload through core's provider and leases.
 */
import { pathToFileURL } from "node:url";
import { createClient } from "@libsql/client";
import { ConnectionProvider } from "@runledger/core/engine";
import type { Driver } from "@runledger/core/port";
import Database from "better-sqlite3";

export const SCHEMA =
  "CREATE TABLE journal (seq INTEGER PRIMARY KEY, entry TEXT NOT NULL, digest BLOB NOT NULL)";
export const INSERT = "INSERT INTO journal (seq, entry, digest) VALUES (?, ?, ?)";

/** About 100 bytes of JSON, different for every row. */
export function entryText(seq: number): string {
  return `{"seq":${seq},"kind":"step.completed","step":"fetch-invoice","attempt":1,"at":${1767225600000 + seq},"ok":true}`;
}

const DIGESTS: readonly Uint8Array[] = Array.from({ length: 16 }, (_, index) => {
  const bytes = new Uint8Array(32);
  for (let i = 0; i < bytes.length; i++) bytes[i] = (index * 131 + i * 29) & 0xff;
  return bytes;
});
const DIGEST_BUFFERS: readonly Buffer[] = DIGESTS.map((bytes) => Buffer.from(bytes));

/** A 32-byte digest as the port takes it (a plain Uint8Array), one of 16 cycled by seq. */
export function digest(seq: number): Uint8Array {
  return DIGESTS[seq & 15] as Uint8Array;
}

/** The same bytes as a Buffer, as code written against the raw drivers would hold them. */
export function digestBuffer(seq: number): Buffer {
  return DIGEST_BUFFERS[seq & 15] as Buffer;
}

/** One open database file, able to run the workload's two shapes. */
export interface Session {
  /** One INSERT per BEGIN IMMEDIATE … COMMIT, for seq in [from, from + count). */
  perTransaction(from: number, count: number): Promise<void>;
  /** `count` INSERTs inside a single BEGIN IMMEDIATE … COMMIT. */
  oneTransaction(from: number, count: number): Promise<void>;
  /** What actually runs, read inside a write transaction (the connection that writes). */
  settings(): Promise<Settings>;
  rowCount(): Promise<number>;
  close(): Promise<void>;
}

export interface Settings {
  readonly journalMode: string;
  /** SQLite's number: 1 = NORMAL, 2 = FULL. */
  readonly synchronous: number;
  readonly sqliteVersion: string;
}

export type OpenSession = (file: string) => Promise<Session>;

/** better-sqlite3 as its own users write it: prepared statements, synchronous calls. */
export const rawBetterSqlite3: OpenSession = async (file) => {
  const db = new Database(file);
  db.pragma("journal_mode = WAL");
  db.pragma("synchronous = NORMAL");
  db.pragma("foreign_keys = ON");
  db.exec(SCHEMA);
  const begin = db.prepare("BEGIN IMMEDIATE");
  const insert = db.prepare(INSERT);
  const commit = db.prepare("COMMIT");
  return {
    async perTransaction(from, count) {
      for (let seq = from; seq < from + count; seq++) {
        begin.run();
        insert.run(seq, entryText(seq), digestBuffer(seq));
        commit.run();
      }
    },
    async oneTransaction(from, count) {
      begin.run();
      for (let seq = from; seq < from + count; seq++) {
        insert.run(seq, entryText(seq), digestBuffer(seq));
      }
      commit.run();
    },
    async settings() {
      return {
        journalMode: String(db.pragma("journal_mode", { simple: true })),
        synchronous: Number(db.pragma("synchronous", { simple: true })),
        sqliteVersion: String(db.prepare("SELECT sqlite_version()").pluck().get()),
      };
    },
    async rowCount() {
      return Number(db.prepare("SELECT count(*) FROM journal").pluck().get());
    },
    async close() {
      db.close();
    },
  };
};

/**
 * @libsql/client as its own users write it for a local file. Its compiled
 * default is synchronous=FULL, so NORMAL is set explicitly; every call here is
 * sequential, so the client's pool keeps reusing the one connection that the
 * PRAGMAs reached (settings() checks that from inside a transaction).
 */
export const rawLibsql: OpenSession = async (file) => {
  const client = createClient({ url: pathToFileURL(file).href, intMode: "bigint" });
  await client.execute("PRAGMA journal_mode = WAL");
  await client.execute("PRAGMA synchronous = NORMAL");
  await client.execute("PRAGMA foreign_keys = ON");
  await client.execute(SCHEMA);
  return {
    async perTransaction(from, count) {
      for (let seq = from; seq < from + count; seq++) {
        const tx = await client.transaction("write");
        await tx.execute({ sql: INSERT, args: [seq, entryText(seq), digestBuffer(seq)] });
        await tx.commit();
      }
    },
    async oneTransaction(from, count) {
      const tx = await client.transaction("write");
      for (let seq = from; seq < from + count; seq++) {
        await tx.execute({ sql: INSERT, args: [seq, entryText(seq), digestBuffer(seq)] });
      }
      await tx.commit();
    },
    async settings() {
      const tx = await client.transaction("write");
      const journal = await tx.execute("PRAGMA journal_mode");
      const synchronous = await tx.execute("PRAGMA synchronous");
      const version = await tx.execute("SELECT sqlite_version()");
      await tx.commit();
      return {
        journalMode: String(journal.rows[0]?.[0]),
        synchronous: Number(synchronous.rows[0]?.[0]),
        sqliteVersion: String(version.rows[0]?.[0]),
      };
    },
    async rowCount() {
      return Number((await client.execute("SELECT count(*) FROM journal")).rows[0]?.[0]);
    },
    async close() {
      client.close();
    },
  };
};

/** Any driver through the port, the way core will call it. */
export function throughPort(driver: Driver): OpenSession {
  return async (file) => {
    const connection = await driver.open(file, {
      create: true,
      readOnly: false,
      busyTimeoutMs: 5000,
    });
    await connection.configure({ journalMode: "wal", synchronous: "normal" });
    await connection.executeScript(SCHEMA);
    return {
      async perTransaction(from, count) {
        for (let seq = from; seq < from + count; seq++) {
          const tx = await connection.begin("immediate");
          await tx.execute(INSERT, [seq, entryText(seq), digest(seq)]);
          await tx.commit();
        }
      },
      async oneTransaction(from, count) {
        const tx = await connection.begin("immediate");
        for (let seq = from; seq < from + count; seq++) {
          await tx.execute(INSERT, [seq, entryText(seq), digest(seq)]);
        }
        await tx.commit();
      },
      async settings() {
        const tx = await connection.begin("immediate");
        const journal = await tx.execute("PRAGMA journal_mode");
        const synchronous = await tx.execute("PRAGMA synchronous");
        const version = await tx.execute("SELECT sqlite_version() AS v");
        await tx.commit();
        return {
          journalMode: String(journal.rows[0]?.journal_mode),
          synchronous: Number(synchronous.rows[0]?.synchronous),
          sqliteVersion: String(version.rows[0]?.v),
        };
      },
      async rowCount() {
        return Number((await connection.execute("SELECT count(*) AS n FROM journal")).rows[0]?.n);
      },
      async close() {
        await connection.close();
      },
    };
  };
}

/**
 * Any driver through core's provider: a `ConnectionProvider` lease over the
 * same plain table, one `lease.transact` per transaction — the queue, the
 * transaction owner, BEGIN IMMEDIATE with busy retry, the scope checks.
 */
export function throughLease(driver: Driver): OpenSession {
  return async (file) => {
    const provider = new ConnectionProvider<true>({ driver });
    const lease = await provider.open(file, { create: true });
    await lease.transact((tx) => tx.execute(SCHEMA));
    return {
      async perTransaction(from, count) {
        for (let seq = from; seq < from + count; seq++) {
          await lease.transact((tx) => tx.execute(INSERT, [seq, entryText(seq), digest(seq)]));
        }
      },
      async oneTransaction(from, count) {
        await lease.transact(async (tx) => {
          for (let seq = from; seq < from + count; seq++) {
            await tx.execute(INSERT, [seq, entryText(seq), digest(seq)]);
          }
        });
      },
      settings: () =>
        lease.transact(async (tx) => {
          const journal = await tx.execute("PRAGMA journal_mode");
          const synchronous = await tx.execute("PRAGMA synchronous");
          const version = await tx.execute("SELECT sqlite_version() AS v");
          return {
            journalMode: String(journal.rows[0]?.journal_mode),
            synchronous: Number(synchronous.rows[0]?.synchronous),
            sqliteVersion: String(version.rows[0]?.v),
          };
        }),
      async rowCount() {
        return Number(
          (await lease.read((r) => r.execute("SELECT count(*) AS n FROM journal"))).rows[0]?.n,
        );
      },
      async close() {
        await lease.release();
        await provider.close();
      },
    };
  };
}
