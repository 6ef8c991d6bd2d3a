/**
 * Settings family (docs/contracts.md, the port and connections): foreign keys are enforced on every
 * connection the adapter hands out, and journal mode and synchronous change
 * only when `configure` asks, then read back as asked.
 */
import type { DriverConnection, DriverTransaction } from "@runledger/core/port";
import { describe, expect, it } from "vitest";
import { type Fixtures, failureOf } from "../fixtures.js";

async function pragma(db: DriverConnection | DriverTransaction, name: string): Promise<unknown> {
  const { rows } = await db.execute(`PRAGMA ${name}`);
  return rows[0]?.[name];
}

/** PRAGMA synchronous reads back as a number: 0 OFF, 1 NORMAL, 2 FULL, 3 EXTRA. */
const SYNCHRONOUS = { normal: 1, full: 2 } as const;

export function describeSettings(fx: Fixtures): void {
  describe("settings", () => {
    const SCHEMA =
      "CREATE TABLE parent (id INTEGER PRIMARY KEY); " +
      "CREATE TABLE child (id INTEGER PRIMARY KEY, parent INTEGER REFERENCES parent (id));";

    it("enforces foreign keys on every connection, read-only ones and transactions included", async () => {
      const location = await fx.database(SCHEMA);
      const first = await fx.open(location, { create: false });
      const second = await fx.open(location, { create: false });
      const reader = await fx.open(location, { create: false, readOnly: true });
      for (const db of [first, second, reader]) expect(await pragma(db, "foreign_keys")).toBe(1);
      const tx = await first.begin("immediate");
      expect(await pragma(tx, "foreign_keys")).toBe(1);
      await tx.commit();
    });

    it("still enforces foreign keys after transactions have come and gone", async () => {
      const db = await fx.open(await fx.database(SCHEMA));
      for (const ending of ["commit", "rollback"] as const) {
        const tx = await db.begin("immediate");
        await tx.execute("INSERT INTO parent (id) VALUES (NULL)");
        await tx[ending]();
      }
      const error = await failureOf(() =>
        db.execute("INSERT INTO child (id, parent) VALUES (1, 42)"),
      );
      expect(error.code).toBe("constraint_foreign_key");
      expect(await pragma(db, "foreign_keys")).toBe(1);
    });

    const files = fx.needs("files");
    const wal = fx.needs("files", "walSharedMemory");
    files.it(
      "leaves a new database in rollback-journal mode until configure asks for WAL",
      async () => {
        const db = await fx.open(fx.location());
        await db.executeScript(SCHEMA);
        expect(await pragma(db, "journal_mode")).toBe("delete");
      },
    );

    wal.it(
      "reads back journal_mode wal and synchronous 1 after configure(wal, normal)",
      async () => {
        const location = await fx.database(SCHEMA);
        const db = await fx.open(location, { create: false });
        await db.configure({ journalMode: "wal", synchronous: "normal" });
        expect(await pragma(db, "journal_mode")).toBe("wal");
        expect(await pragma(db, "synchronous")).toBe(SYNCHRONOUS.normal);

        // The setting holds on the connection a transaction runs on.
        const tx = await db.begin("immediate");
        expect(await pragma(tx, "synchronous")).toBe(SYNCHRONOUS.normal);
        await tx.execute("INSERT INTO parent (id) VALUES (1)");
        await tx.commit();
        expect(await pragma(db, "synchronous")).toBe(SYNCHRONOUS.normal);

        // WAL belongs to the file: a later connection finds it.
        const later = await fx.open(location, { create: false });
        expect(await pragma(later, "journal_mode")).toBe("wal");
      },
    );

    files.it(
      "reads back synchronous 2 after configure(full) and returns to 1 after configure(normal)",
      async () => {
        const db = await fx.open(await fx.database(SCHEMA), { create: false });
        await db.configure({ synchronous: "full" });
        expect(await pragma(db, "synchronous")).toBe(SYNCHRONOUS.full);
        await db.configure({ synchronous: "normal" });
        expect(await pragma(db, "synchronous")).toBe(SYNCHRONOUS.normal);
      },
    );

    files.it(
      "switches a WAL database back to rollback-journal mode on configure(delete)",
      async () => {
        const db = await fx.open(await fx.database(SCHEMA), { create: false });
        await db.configure({ journalMode: "wal" });
        await db.configure({ journalMode: "delete" });
        expect(await pragma(db, "journal_mode")).toBe("delete");
      },
    );
  });
}
