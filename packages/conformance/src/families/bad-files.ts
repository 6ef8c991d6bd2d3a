/**
 * Bad-file family (docs/file-format.md): recognition refuses every file that is not
 * exactly a version-1 run, each kind with its own code, and leaves the file
 * as found — the same SHA-256, and nothing added beside it (no -wal, -shm or
 * -journal) — whether or not the caller asked to create. A 0-byte file is
 * fresh; a valid v1 file in rollback-journal mode is recognized and switched
 * to WAL only after recognition has succeeded.
 */
import { readFile, writeFile } from "node:fs/promises";
import { basename, join } from "node:path";
import { APPLICATION_ID, type RunledgerError, SCHEMA_V1, SCHEMA_V1_DIGEST } from "@runledger/core";
import { CommitLogStore, ReadModelStore } from "@runledger/core/commit-log";
import { DatastoreStore } from "@runledger/core/datastore";
import { type SchemaObject, WORKSPACE_ENCODING_V1 } from "@runledger/core/engine";
import type {
  BeginMode,
  ConnectionSettings,
  Driver,
  DriverConnection,
  DriverTransaction,
  SqlValue,
} from "@runledger/core/port";
import { expect, it } from "vitest";
import { type Fixtures, failureOf } from "../fixtures.js";
import {
  CREATE,
  copyInto,
  fingerprint,
  liveSchema,
  noise,
  pragma,
  raw,
  runStore,
  schemaDigest,
  v1BaseFile,
} from "./run-fixtures.js";

/** The eight bytes every PNG image starts with, then an IHDR chunk header. */
const PNG_HEADER = Buffer.from([
  0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a, 0x00, 0x00, 0x00, 0x0d, 0x49, 0x48, 0x44, 0x52,
]);

/** GeoPackage's application_id ("GPKG"): a real SQLite format owned by another program. */
const OTHER_APPLICATION_ID = 0x47504b47;

interface BadFile {
  readonly name: string;
  /** Writes the fixture at `location` (a path in a directory of its own). */
  readonly build: (location: string) => Promise<void>;
  readonly code: string;
  /** Further checks on the refusal. */
  readonly check?: (error: RunledgerError) => void;
}

/** The encoding of a build with another cut frequency, as its identity row would record it. */
const OTHER_ENCODING = WORKSPACE_ENCODING_V1.replace(/;cut=1\/\d+;/, ";cut=1/12;");

/** A refusal that names both encodings. */
function encodings(error: RunledgerError): void {
  expect(OTHER_ENCODING).not.toBe(WORKSPACE_ENCODING_V1);
  expect(error.details).toEqual({ found: OTHER_ENCODING, expected: WORKSPACE_ENCODING_V1 });
  expect(error.message).toContain(OTHER_ENCODING);
  expect(error.message).toContain(WORKSPACE_ENCODING_V1);
}

export function describeBadFiles(fx: Fixtures): void {
  const wal = fx.needs("walSharedMemory");
  fx.needs("files").describe("bad files", () => {
    const v1Base = v1BaseFile(fx);

    /** A fresh file built on one raw connection from statements. */
    const crafted = (statements: readonly string[]) => async (location: string) => {
      await raw(fx, location, statements, { create: true });
    };

    /** A copy of the v1 base, then statements on one raw connection. */
    const derived = (statements: readonly string[]) => async (location: string) => {
      await writeFile(location, await readFile(await v1Base()));
      if (statements.length > 0) await raw(fx, location, statements);
    };

    /** The v1 base cut to `length(size)` bytes. */
    const truncated = (length: (size: number) => number) => async (location: string) => {
      const bytes = await readFile(await v1Base());
      const cut = length(bytes.byteLength);
      expect(cut).toBeLessThan(bytes.byteLength);
      await writeFile(location, bytes.subarray(0, cut));
    };

    const firstIndex = SCHEMA_V1.objects.find((o) => o.type === "index" && o.sql !== null)!;
    const relaxed = relaxOneCheck(SCHEMA_V1.objects);
    const differences = (...expected: { change: string; type: string; name: string }[]) =>
      function check(error: RunledgerError) {
        expect(error.details?.differences).toEqual(
          expected.map((difference) => expect.objectContaining(difference)),
        );
        for (const { name } of expected) expect(error.message).toContain(name);
      };

    const corpus: BadFile[] = [
      {
        name: "random bytes",
        build: (location) => writeFile(location, noise("random bytes", 8192)),
        code: "not_a_database",
      },
      {
        name: "a PNG image",
        build: (location) =>
          writeFile(location, Buffer.concat([PNG_HEADER, noise("png body", 4080)])),
        code: "not_a_database",
      },
      {
        name: "a v1 file cut inside SQLite's magic string",
        build: truncated(() => 10),
        code: "not_a_database",
      },
      // A cut that keeps SQLite's header: SQLite sees a database whose header
      // promises more pages than the file holds and answers SQLITE_CORRUPT.
      {
        name: "a v1 file missing its last page",
        build: truncated((size) => size - 4096),
        code: "corrupt",
      },
      {
        name: "a v1 file cut in half",
        build: truncated((size) => Math.floor(size / 2)),
        code: "corrupt",
      },
      { name: "a v1 file cut to its first page", build: truncated(() => 4096), code: "corrupt" },
      {
        name: "another program's SQLite database (tables, no application_id)",
        build: crafted([
          "CREATE TABLE notes (id INTEGER PRIMARY KEY, body TEXT NOT NULL)",
          "INSERT INTO notes (body) VALUES ('not a run')",
        ]),
        code: "foreign_database",
        check: (error) => expect(error.details?.applicationId).toBe(0),
      },
      {
        name: "another program's SQLite database (its own application_id)",
        build: crafted([
          `PRAGMA application_id = ${OTHER_APPLICATION_ID}`,
          "CREATE TABLE gpkg_contents (table_name TEXT NOT NULL PRIMARY KEY)",
        ]),
        code: "foreign_database",
        check: (error) => expect(error.details?.applicationId).toBe(OTHER_APPLICATION_ID),
      },
      {
        name: "our application_id with user_version 0",
        build: crafted([`PRAGMA application_id = ${APPLICATION_ID}`]),
        code: "partial_initialization",
      },
      {
        name: "our application_id with user_version 0 and some v1 tables",
        build: crafted([
          `PRAGMA application_id = ${APPLICATION_ID}`,
          ...SCHEMA_V1.objects.flatMap((o) => (o.sql === null ? [] : [o.sql])).slice(0, 3),
        ]),
        code: "partial_initialization",
        check: (error) => expect(error.details?.objects).toBeGreaterThanOrEqual(3),
      },
      {
        name: `the v1 schema minus index ${firstIndex.name}`,
        build: derived([`DROP INDEX ${firstIndex.name}`]),
        code: "schema_mismatch",
        check: differences({ change: "missing", type: "index", name: firstIndex.name }),
      },
      {
        name: "the v1 schema plus an index",
        build: derived(["CREATE INDEX journal_by_written_at ON journal (written_at)"]),
        code: "schema_mismatch",
        check: differences({ change: "extra", type: "index", name: "journal_by_written_at" }),
      },
      {
        name: "the v1 schema plus a trigger",
        build: derived(["CREATE TRIGGER run_touch AFTER UPDATE ON run BEGIN SELECT 1; END"]),
        code: "schema_mismatch",
        check: differences({ change: "extra", type: "trigger", name: "run_touch" }),
      },
      {
        name: "the v1 schema plus a view",
        build: derived([
          "CREATE VIEW latest_event AS SELECT max(sequence) AS sequence FROM journal",
        ]),
        code: "schema_mismatch",
        check: differences({ change: "extra", type: "view", name: "latest_event" }),
      },
      {
        name: `the v1 schema with a CHECK removed from ${relaxed.table}`,
        build: crafted([
          `PRAGMA application_id = ${APPLICATION_ID}`,
          ...relaxed.objects.flatMap((o) => (o.sql === null ? [] : [o.sql])),
          `PRAGMA user_version = ${SCHEMA_V1.userVersion}`,
        ]),
        code: "schema_mismatch",
        check: differences({ change: "different", type: "table", name: relaxed.table }),
      },
      {
        name: "a v1 file with user_version 2",
        build: derived(["PRAGMA user_version = 2"]),
        code: "unsupported_version",
        check: (error) => expect(error.details?.userVersion).toBe(2),
      },
      {
        name: "a valid v1 file whose run row is missing",
        build: derived(["DELETE FROM run"]),
        code: "corrupt",
        check: (error) => expect(error.message).toContain("it holds no run row"),
      },
      {
        name: "a valid v1 file whose identity row is missing",
        build: derived(["DELETE FROM runledger_identity"]),
        code: "corrupt",
        check: (error) => expect(error.message).toContain("it has no identity row"),
      },
      {
        name: "a valid v1 file whose current root's node is missing",
        build: derived(["DELETE FROM workspace_object"]),
        code: "corrupt",
        check: (error) =>
          expect(error.message).toContain("its current workspace root does not exist"),
      },
      {
        name: "a valid v1 file whose newest event names a root neither stored nor held",
        build: derived([
          `INSERT INTO journal (sequence, event_id, record, root_id, root_node, written_at, digest)
SELECT coalesce(max(sequence), 0) + 1, 'e', '{}', X'${"ab".repeat(32)}', NULL, 0, zeroblob(32) FROM journal`,
        ]),
        code: "corrupt",
        check: (error) =>
          expect(error.message).toContain("its current workspace root does not exist"),
      },
      {
        name: "a v1 file whose identity row records another workspace encoding",
        build: derived([`UPDATE runledger_identity SET encoding = '${OTHER_ENCODING}'`]),
        code: "encoding_mismatch",
        check: encodings,
      },
      {
        name: "a v1 file without its header id whose identity row records another workspace encoding",
        build: derived([
          "PRAGMA application_id = 0",
          `UPDATE runledger_identity SET encoding = '${OTHER_ENCODING}'`,
        ]),
        code: "encoding_mismatch",
        check: encodings,
      },
      {
        name: "a v1 file whose identity row records another encoding and whose schema differs too",
        build: derived([
          `UPDATE runledger_identity SET encoding = '${OTHER_ENCODING}'`,
          "CREATE INDEX journal_by_written_at ON journal (written_at)",
        ]),
        code: "encoding_mismatch",
        check: (error) => {
          encodings(error);
          // The schema's differences stay at hand, as the cause.
          expect((error.cause as RunledgerError | undefined)?.code).toBe("schema_mismatch");
        },
      },
      {
        // What a build from before the encoding was recorded wrote: no row to read it from.
        name: "a v1 file whose identity table has no encoding column",
        build: derived(["ALTER TABLE runledger_identity DROP COLUMN encoding"]),
        code: "schema_mismatch",
        check: differences({ change: "different", type: "table", name: "runledger_identity" }),
      },
      {
        name: "a v1 file without its header id and without the identity table",
        build: derived(["PRAGMA application_id = 0", "DROP TABLE runledger_identity"]),
        code: "foreign_database",
        check: (error) => expect(error.details?.applicationId).toBe(0),
      },
      {
        name: "another program's database with user_version 1 and no application_id",
        build: crafted(["CREATE TABLE run (id INTEGER PRIMARY KEY)", "PRAGMA user_version = 1"]),
        code: "foreign_database",
        check: (error) => expect(error.details?.applicationId).toBe(0),
      },
      {
        name: "a v1 file without its header id whose identity table differs",
        build: crafted([
          ...SCHEMA_V1.objects.flatMap((o) =>
            o.sql === null
              ? []
              : [o.name === "runledger_identity" ? o.sql.replace("STRICT", "") : o.sql],
          ),
          `PRAGMA user_version = ${SCHEMA_V1.userVersion}`,
        ]),
        code: "foreign_database",
      },
    ];

    for (const bad of corpus) {
      it(`refuses ${bad.name} as ${bad.code}, leaving its bytes and directory as found`, async () => {
        const location = join(await fx.scratchDirectory(), "run.sqlite");
        await bad.build(location);
        const before = await fingerprint(location);
        expect(before.listing).toEqual([basename(location)]);
        expect(before.size).toBeGreaterThan(0);

        for (const options of [{}, { create: CREATE }]) {
          const error = await failureOf(() => runStore(fx).open(location, options));
          expect(error.code, `${bad.name}, create: ${"create" in options}`).toBe(bad.code);
          expect(error.message).toContain(location);
          bad.check?.(error);
          expect(await fingerprint(location)).toEqual(before);
        }
      });
    }

    it("refuses a 0-byte file without create as not_found, leaving it as found", async () => {
      const location = join(await fx.scratchDirectory(), "run.sqlite");
      await writeFile(location, Buffer.alloc(0));
      const before = await fingerprint(location);
      const error = await failureOf(() => runStore(fx).open(location));
      expect(error.code).toBe("not_found");
      expect(await fingerprint(location)).toEqual(before);
      expect(before.size).toBe(0);
    });

    // biome-ignore format: gated registration; the body keeps its formatting for the merge
    wal.it("creates a fresh run in a 0-byte file when asked to", async () => {
      const location = join(await fx.scratchDirectory(), "run.sqlite");
      await writeFile(location, Buffer.alloc(0));
      const lease = await runStore(fx).open(location, { create: CREATE });
      expect((await lease.read((r) => r.run.get())).runId).toBe(CREATE.runId);
      expect(schemaDigest(await liveSchema(fx, location))).toBe(SCHEMA_V1_DIGEST);
      await lease.release();
    });

    wal.it(
      "recognizes a v1 file whose header id is 0 by its identity table, and leaves the header as found",
      async () => {
        // What a run created on a libSQL server looks like: the server refuses
        // PRAGMA application_id, so only the identity table names the format.
        const location = await copyInto(fx, await v1Base());
        await raw(fx, location, ["PRAGMA application_id = 0"]);
        const lease = await runStore(fx).open(location);
        const events = await lease.read((r) => r.journal.list());
        expect(events.map((event) => event.record)).toEqual([{ step: "fetch" }, { step: "build" }]);
        await lease.transact((tx) => tx.workspace.apply({ put: { "a.txt": "a" } }));
        expect((await lease.verify()).problems).toEqual([]);
        await lease.release();
        expect(await pragma(fx, location, "application_id")).toBe(0);
      },
    );

    wal.it(
      "creates a run without writing the header id on a connection that says it is remote",
      async () => {
        const location = fx.location();
        const inner = fx.driver();
        const { driver, log } = recording(inner);
        const remote: Driver = {
          ...driver,
          async open(at, options) {
            const connection = await driver.open(at, options);
            return { ...connection, remote: true };
          },
        };
        const lease = await runStore(fx, { driver: remote }).open(location, { create: CREATE });
        await lease.release();
        expect(log.some((entry) => entry.startsWith("PRAGMA application_id"))).toBe(false);
        expect(log).toContain(`PRAGMA user_version = ${SCHEMA_V1.userVersion}`);
        expect(await pragma(fx, location, "application_id")).toBe(0);
        // Every adapter recognizes it, through its identity table.
        const again = await runStore(fx).open(location);
        expect((await again.read((r) => r.run.get())).runId).toBe(CREATE.runId);
        await again.release();
      },
    );

    wal.it(
      "creates a commit log, read model and datastore without the header id on a connection that says it is remote; each is recognized by its identity table, and no kind opens another's file",
      async () => {
        const remote: Driver = {
          ...fx.driver(),
          async open(at, options) {
            const connection = await fx.driver().open(at, options);
            return {
              execute: (sql, params) => connection.execute(sql, params),
              executeScript: (sql) => connection.executeScript(sql),
              begin: (mode) => connection.begin(mode),
              configure: (settings) => connection.configure(settings),
              close: () => connection.close(),
              remote: true,
            };
          },
        };
        const kinds = [
          (driver: Driver) => new CommitLogStore({ driver }),
          (driver: Driver) => new ReadModelStore({ driver }),
          (driver: Driver) => new DatastoreStore({ driver }),
        ];
        const locations: string[] = [];
        for (const make of kinds) {
          const location = fx.location();
          locations.push(location);
          const store = make(remote);
          try {
            await store.open(location, { create: true });
          } finally {
            await store.close();
          }
          const live = await liveSchema(fx, location);
          expect(live.applicationId).toBe(0);
          expect(live.objects.length).toBeGreaterThan(1);
        }
        for (const [i, make] of kinds.entries()) {
          for (const [j, location] of locations.entries()) {
            const before = await liveSchema(fx, location);
            const store = make(fx.driver());
            try {
              if (i === j) {
                await store.open(location);
              } else {
                const error = await failureOf(() => store.open(location));
                expect(error.code).toMatch(/^[a-z_]+$/);
              }
            } finally {
              await store.close();
            }
            expect(await liveSchema(fx, location)).toStrictEqual(before);
          }
        }
      },
    );

    // biome-ignore format: gated registration; the body keeps its formatting for the merge
    wal.it("recognizes a v1 file in rollback-journal mode and switches it to WAL only afterwards", async () => {
      const location = await copyInto(fx, await v1Base());
      expect(await pragma(fx, location, "journal_mode")).toBe("delete");
      const header = await readFile(location);
      // File format read/write versions: 1 is rollback journal, 2 is WAL.
      expect([header[18], header[19]]).toEqual([1, 1]);

      const { driver, log } = recording(fx.driver());
      const lease = await runStore(fx, { driver }).open(location);
      const configured = log.findIndex((entry) => entry.startsWith("configure"));
      expect(log[configured]).toMatch(/journalMode":"wal/);
      // Every recognition read (the schema, the singleton rows) came first, and no write.
      const before = log.slice(0, configured);
      for (const read of ["sqlite_schema", "FROM run", "workspace_current"]) {
        expect(
          before.some((entry) => entry.includes(read)),
          read,
        ).toBe(true);
      }
      expect(
        before.filter((entry) => /^\s*(INSERT|UPDATE|DELETE|CREATE|DROP)/i.test(entry)),
      ).toEqual([]);

      expect(await pragma(fx, location, "journal_mode")).toBe("wal");
      const events = await lease.read((r) => r.journal.list());
      expect(events.map((event) => event.record)).toEqual([{ step: "fetch" }, { step: "build" }]);
      const appended = await lease.transact((tx) => tx.journal.append({ step: "ship" }));
      expect(appended.sequence).toBe(3);
      expect((await lease.verify()).problems).toEqual([]);
      await lease.release();
    });

    // biome-ignore format: gated registration; the body keeps its formatting for the merge
    wal.it("reopening a run already in WAL reads the schema in one statement, outside any transaction, and sets only durability", async () => {
      const location = await copyInto(fx, await v1Base());
      const first = runStore(fx);
      await (await first.open(location)).release();
      await first.close();
      expect(await pragma(fx, location, "journal_mode")).toBe("wal");

      const { driver, log } = recording(fx.driver());
      const store = runStore(fx, { driver });
      const lease = await store.open(location);
      const configured = log.findIndex((entry) => entry.startsWith("configure"));
      expect(log[configured]).toBe('configure {"synchronous":"normal"}');
      const before = log.slice(0, configured);
      expect(before.filter((entry) => entry.includes("sqlite_schema"))).toHaveLength(1);
      expect(before.filter((entry) => /^(BEGIN|COMMIT|ROLLBACK|PRAGMA)/.test(entry))).toEqual([]);
      expect(await pragma(fx, location, "journal_mode")).toBe("wal");
      expect((await lease.read((r) => r.journal.list())).length).toBe(2);
      await lease.release();
      await store.close();
    });
  });
}

/**
 * SCHEMA_V1's objects with the first CHECK clause of one table removed (the
 * run table's, where it has one): a column whose constraint is relaxed.
 */
function relaxOneCheck(objects: readonly SchemaObject[]): {
  table: string;
  objects: SchemaObject[];
} {
  const tables = objects.filter((o) => o.type === "table" && o.sql?.includes(" CHECK ("));
  const target = tables.find((o) => o.name === "run") ?? tables[0];
  if (target?.sql == null) throw new Error("SCHEMA_V1 has no table with a CHECK to relax");
  const sql = target.sql;
  const start = sql.indexOf(" CHECK (");
  let depth = 0;
  let end = start + " CHECK ".length;
  for (; end < sql.length; end++) {
    if (sql[end] === "(") depth++;
    else if (sql[end] === ")" && --depth === 0) break;
  }
  const relaxedSql = sql.slice(0, start) + sql.slice(end + 1);
  return {
    table: target.name,
    objects: objects.map((o) => (o === target ? { ...o, sql: relaxedSql } : o)),
  };
}

/** Wraps a driver so that every statement and `configure` call is logged in order. */
function recording(inner: Driver): { driver: Driver; log: string[] } {
  const log: string[] = [];
  const session = (transaction: DriverTransaction): DriverTransaction => ({
    get active() {
      return transaction.active;
    },
    execute: (sql: string, params?: readonly SqlValue[]) => {
      log.push(sql);
      return transaction.execute(sql, params);
    },
    executeScript: (sql: string) => {
      log.push(sql);
      return transaction.executeScript(sql);
    },
    commit: () => {
      log.push("COMMIT");
      return transaction.commit();
    },
    rollback: () => {
      log.push("ROLLBACK");
      return transaction.rollback();
    },
  });
  const wrap = (connection: DriverConnection): DriverConnection => ({
    execute: (sql: string, params?: readonly SqlValue[]) => {
      log.push(sql);
      return connection.execute(sql, params);
    },
    executeScript: (sql: string) => {
      log.push(sql);
      return connection.executeScript(sql);
    },
    begin: async (mode: BeginMode) => {
      log.push(`BEGIN ${mode}`);
      return session(await connection.begin(mode));
    },
    configure: (settings: ConnectionSettings) => {
      log.push(`configure ${JSON.stringify(settings)}`);
      return connection.configure(settings);
    },
    close: () => connection.close(),
  });
  return {
    log,
    driver: {
      name: `${inner.name}+recording`,
      canonicalize: (location) => inner.canonicalize(location),
      open: async (location, options) => wrap(await inner.open(location, options)),
    },
  };
}
