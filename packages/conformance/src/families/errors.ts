/**
 * Errors family (docs/errors.md): what SQLite refuses reaches the caller as one
 * RunledgerError with the same stable `code` and the same `sqliteCode` on
 * every adapter, with a message and the driver's error kept as `cause`.
 */
import { existsSync } from "node:fs";
import { mkdir, readdir, readFile, writeFile } from "node:fs/promises";
import { basename, dirname, join } from "node:path";
import { describe, expect, it } from "vitest";
import { type ExpectedFailure, expectTranslated, type Fixtures, failureOf } from "../fixtures.js";
import type { Gated } from "../requirements.js";

const SCHEMA = `
  CREATE TABLE parent (id INTEGER PRIMARY KEY);
  CREATE TABLE child (
    id INTEGER PRIMARY KEY,
    parent INTEGER REFERENCES parent (id),
    name TEXT NOT NULL DEFAULT 'unnamed',
    tag TEXT UNIQUE,
    size INTEGER CHECK (size >= 0)
  );
  INSERT INTO parent (id) VALUES (1);
  INSERT INTO child (id, parent, tag, size) VALUES (1, 1, 'taken', 0);
`;

interface StatementCase extends ExpectedFailure {
  readonly behaviour: string;
  readonly sql: string;
  readonly params?: readonly (number | string | null)[];
  /**
   * The sqliteCode a remote server gives instead: it sends primary codes
   * only, and a UNIQUE failure's message cannot tell an index from a primary
   * key (docs/errors.md).
   */
  readonly remoteSqliteCode?: string;
}

const STATEMENT_CASES: readonly StatementCase[] = [
  {
    behaviour: "a row naming a missing parent fails with constraint_foreign_key",
    sql: "INSERT INTO child (id, parent) VALUES (2, ?)",
    params: [99],
    code: "constraint_foreign_key",
    sqliteCode: "SQLITE_CONSTRAINT_FOREIGNKEY",
    mentions: /foreign key/i,
  },
  {
    behaviour: "deleting a parent that is still referenced fails with constraint_foreign_key",
    sql: "DELETE FROM parent WHERE id = 1",
    code: "constraint_foreign_key",
    sqliteCode: "SQLITE_CONSTRAINT_FOREIGNKEY",
    mentions: /foreign key/i,
  },
  {
    behaviour: "a duplicate UNIQUE value fails with constraint_unique",
    sql: "INSERT INTO child (id, tag) VALUES (2, ?)",
    params: ["taken"],
    code: "constraint_unique",
    sqliteCode: "SQLITE_CONSTRAINT_UNIQUE",
    remoteSqliteCode: "SQLITE_CONSTRAINT",
    mentions: /unique/i,
  },
  {
    behaviour: "a duplicate primary key fails with constraint_unique",
    sql: "INSERT INTO child (id) VALUES (1)",
    code: "constraint_unique",
    sqliteCode: "SQLITE_CONSTRAINT_PRIMARYKEY",
    remoteSqliteCode: "SQLITE_CONSTRAINT",
  },
  {
    behaviour: "a NULL in a NOT NULL column fails with constraint_not_null",
    sql: "INSERT INTO child (id, name) VALUES (2, ?)",
    params: [null],
    code: "constraint_not_null",
    sqliteCode: "SQLITE_CONSTRAINT_NOTNULL",
    mentions: /not null/i,
  },
  {
    behaviour: "a value breaking a CHECK fails with constraint_check",
    sql: "INSERT INTO child (id, size) VALUES (2, ?)",
    params: [-1],
    code: "constraint_check",
    sqliteCode: "SQLITE_CONSTRAINT_CHECK",
    mentions: /check/i,
  },
  {
    behaviour: "a malformed statement fails with sql_error",
    sql: "INSERT INTO child VALUES (",
    code: "sql_error",
    sqliteCode: "SQLITE_ERROR",
  },
];

/** A busy timeout short enough to keep the suite fast, long enough to measure. */
const BUSY_TIMEOUT_MS = 300;

export function describeErrors(fx: Fixtures): void {
  describe("errors", () => {
    async function counts(db: { execute: (sql: string) => Promise<{ rows: unknown[] }> }) {
      const { rows } = await db.execute(
        "SELECT (SELECT count(*) FROM parent) AS parents, (SELECT count(*) FROM child) AS children",
      );
      return rows[0];
    }

    for (const c of STATEMENT_CASES) {
      // The stable code and SQLite's primary code: every subject gives these.
      it(`${c.behaviour} and changes nothing`, async () => {
        const db = await fx.open(await fx.database(SCHEMA));
        const error = await failureOf(() => db.execute(c.sql, c.params ?? []));
        const remoteCode = fx.remote ? c.remoteSqliteCode : undefined;
        expectTranslated(
          error,
          remoteCode === undefined
            ? { ...c, extended: false }
            : { ...c, sqliteCode: remoteCode, extended: false },
        );
        expect(await counts(db)).toStrictEqual({ parents: 1, children: 1 });
      });
      if (c.sqliteCode !== c.sqliteCode.split("_").slice(0, 2).join("_")) {
        fx.needs("extendedErrorCodes").it(
          `${c.behaviour}, reported as ${c.sqliteCode}`,
          async () => {
            const db = await fx.open(await fx.database(SCHEMA));
            expectTranslated(await failureOf(() => db.execute(c.sql, c.params ?? [])), c);
          },
        );
      }
    }

    it("translates the same failure the same way in a script and in a transaction", async () => {
      const db = await fx.open(await fx.database(SCHEMA));
      const expected = {
        code: "constraint_foreign_key",
        sqliteCode: "SQLITE_CONSTRAINT_FOREIGNKEY",
        extended: fx.has("extendedErrorCodes"),
      } as const;
      expectTranslated(
        await failureOf(() => db.executeScript("INSERT INTO child (id, parent) VALUES (2, 99);")),
        expected,
      );
      const tx = await db.begin("immediate");
      expectTranslated(
        await failureOf(() => tx.execute("INSERT INTO child (id, parent) VALUES (2, 99)")),
        expected,
      );
      expectTranslated(
        await failureOf(() => tx.executeScript("INSERT INTO child (id, parent) VALUES (3, 99);")),
        expected,
      );
      await tx.rollback();
      expect(await counts(db)).toStrictEqual({ parents: 1, children: 1 });
    });

    describeFileErrors(fx, fx.needs("files"));
    describeBusy(fx, fx.needs("childProcesses", "readersDuringWrite"));
  });
}

function describeFileErrors(fx: Fixtures, { it }: Gated): void {
  async function siblings(location: string): Promise<string[]> {
    const name = basename(location);
    return (await readdir(dirname(location))).filter((entry) => entry.startsWith(name)).sort();
  }

  it("a file that is not a database fails with not_a_database and keeps its bytes", async () => {
    const location = fx.location();
    const garbage = new TextEncoder().encode("this is no SQLite file, only text. ".repeat(200));
    await writeFile(location, garbage);
    const error = await failureOf(async () => {
      const db = await fx.open(location, { create: false });
      await db.execute("SELECT count(*) AS n FROM sqlite_schema");
    });
    expectTranslated(error, { code: "not_a_database", sqliteCode: "SQLITE_NOTADB" });
    expect(new Uint8Array(await readFile(location))).toStrictEqual(garbage);
    expect(await siblings(location), "no journal or WAL left beside it").toStrictEqual([
      basename(location),
    ]);
  });

  it("a location in a missing directory fails with cannot_open and creates nothing", async () => {
    const missingDirectory = join(await fx.scratchDirectory(), "missing");
    const location = join(missingDirectory, "run.db");
    for (const create of [true, false]) {
      const error = await failureOf(() => fx.open(location, { create }));
      expectTranslated(error, {
        code: "cannot_open",
        sqliteCode: "SQLITE_CANTOPEN",
        hasCause: false,
      });
    }
    expect(existsSync(missingDirectory)).toBe(false);
  });

  it("a missing file opened without create fails with cannot_open and is not created", async () => {
    const location = fx.location();
    for (const readOnly of [false, true]) {
      const error = await failureOf(() => fx.open(location, { create: false, readOnly }));
      expectTranslated(error, {
        code: "cannot_open",
        sqliteCode: "SQLITE_CANTOPEN",
        hasCause: false,
      });
      expect(existsSync(location), `readOnly: ${readOnly}`).toBe(false);
    }
  });

  it("a read-only opening never creates a missing file, even when asked to create", async () => {
    const location = fx.location();
    const error = await failureOf(() => fx.open(location, { create: true, readOnly: true }));
    expectTranslated(error, {
      code: "cannot_open",
      sqliteCode: "SQLITE_CANTOPEN",
      hasCause: false,
    });
    expect(existsSync(location)).toBe(false);
  });

  it("a directory given as the location fails with cannot_open", async () => {
    const directory = join(await fx.scratchDirectory(), "a-directory");
    await mkdir(directory);
    const error = await failureOf(() => fx.open(directory, { create: true }));
    expectTranslated(error, {
      code: "cannot_open",
      sqliteCode: "SQLITE_CANTOPEN",
      hasCause: false,
    });
  });
}

function describeBusy(fx: Fixtures, { it }: Gated): void {
  const TABLE = "CREATE TABLE entry (id INTEGER PRIMARY KEY, writer TEXT NOT NULL)";
  const busy = { code: "busy", sqliteCode: "SQLITE_BUSY" } as const;

  it("BEGIN IMMEDIATE fails with busy after the busy timeout while another process holds the write lock", async () => {
    const location = await fx.database(TABLE);
    const holder = await fx.holdWriteLock(location);
    const db = await fx.open(location, { create: false, busyTimeoutMs: BUSY_TIMEOUT_MS });
    const started = Date.now();
    const error = await failureOf(() => db.begin("immediate"));
    const waited = Date.now() - started;
    expectTranslated(error, busy);
    expect(waited, "the busy timeout was honoured").toBeGreaterThanOrEqual(BUSY_TIMEOUT_MS / 2);
    expect(waited, "no hang past the busy timeout").toBeLessThan(BUSY_TIMEOUT_MS + 10_000);
    await holder.release("rollback");
  });

  it("a single write fails with busy while another process holds the write lock, and later writes commit", async () => {
    const location = await fx.database(TABLE);
    const holder = await fx.holdWriteLock(location);
    const db = await fx.open(location, { create: false, busyTimeoutMs: BUSY_TIMEOUT_MS });
    const error = await failureOf(() =>
      db.execute("INSERT INTO entry (writer) VALUES (?)", ["refused"]),
    );
    expectTranslated(error, busy);
    await holder.release("rollback");

    // The refused write left nothing behind on the connection: what follows commits for real.
    await db.execute("INSERT INTO entry (id, writer) VALUES (1, 'autocommit')");
    const tx = await db.begin("immediate");
    await tx.execute("INSERT INTO entry (id, writer) VALUES (2, 'transaction')");
    await tx.commit();
    const other = await fx.open(location, { create: false });
    const { rows } = await other.execute("SELECT id, writer FROM entry ORDER BY id");
    expect(rows).toStrictEqual([
      { id: 1, writer: "autocommit" },
      { id: 2, writer: "transaction" },
    ]);
  });

  it("a write refused as busy inside a deferred transaction leaves later transactions able to commit", async () => {
    const location = await fx.database(TABLE);
    const holder = await fx.holdWriteLock(location);
    const db = await fx.open(location, { create: false, busyTimeoutMs: BUSY_TIMEOUT_MS });
    const deferred = await db.begin("deferred");
    expectTranslated(
      await failureOf(() => deferred.execute("INSERT INTO entry (writer) VALUES ('refused')")),
      busy,
    );
    await deferred.rollback();
    await holder.release("rollback");

    const tx = await db.begin("immediate");
    await tx.execute("INSERT INTO entry (id, writer) VALUES (1, 'after')");
    await tx.commit();
    const other = await fx.open(location, { create: false });
    const { rows } = await other.execute("SELECT id, writer FROM entry ORDER BY id");
    expect(rows).toStrictEqual([{ id: 1, writer: "after" }]);
  });

  it("once the other process commits, a retried write lands and both writes are kept", async () => {
    const location = await fx.database(TABLE);
    const holder = await fx.holdWriteLock(location, [
      "INSERT INTO entry (id, writer) VALUES (1, 'child')",
    ]);
    const db = await fx.open(location, { create: false, busyTimeoutMs: BUSY_TIMEOUT_MS });
    expect((await failureOf(() => db.begin("immediate"))).code).toBe("busy");
    await holder.release("commit");
    const tx = await db.begin("immediate");
    await tx.execute("INSERT INTO entry (id, writer) VALUES (2, 'parent')");
    await tx.commit();
    const other = await fx.open(location, { create: false });
    const { rows } = await other.execute("SELECT id, writer FROM entry ORDER BY id");
    expect(rows).toStrictEqual([
      { id: 1, writer: "child" },
      { id: 2, writer: "parent" },
    ]);
  });
}
