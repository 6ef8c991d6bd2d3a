/**
 * Sessions family (docs/contracts.md, the port and transactions): a transaction session
 * commits what it wrote or nothing, savepoints nest inside it with SQLite's
 * own semantics, a finished session refuses further use, and a read-only
 * connection never writes.
 */
import type { DriverConnection, DriverTransaction } from "@runledger/core/port";
import { describe, expect, it } from "vitest";
import { expectTranslated, type Fixtures, failureOf } from "../fixtures.js";

const SCHEMA = "CREATE TABLE item (name TEXT PRIMARY KEY)";

async function names(db: DriverConnection | DriverTransaction): Promise<string[]> {
  const { rows } = await db.execute("SELECT name FROM item ORDER BY name");
  return rows.map((row) => row.name as string);
}

async function insert(db: DriverConnection | DriverTransaction, ...values: string[]) {
  for (const value of values) await db.execute("INSERT INTO item (name) VALUES (?)", [value]);
}

export function describeSessions(fx: Fixtures): void {
  describe("sessions", () => {
    async function twoConnections() {
      const location = await fx.database(SCHEMA);
      return {
        location,
        writer: await fx.open(location, { create: false }),
        reader: await fx.open(location, { create: false }),
      };
    }

    it("a committed transaction's rows are visible to another connection", async () => {
      const { writer, reader } = await twoConnections();
      const tx = await writer.begin("immediate");
      await insert(tx, "a", "b");
      await tx.commit();
      expect(await names(writer)).toStrictEqual(["a", "b"]);
      expect(await names(reader)).toStrictEqual(["a", "b"]);
    });

    fx.needs("readersDuringWrite").it(
      "an open transaction's rows stay invisible to another connection until it commits",
      async () => {
        const { writer, reader } = await twoConnections();
        const tx = await writer.begin("immediate");
        await insert(tx, "pending");
        expect(await names(tx), "the transaction sees its own write").toStrictEqual(["pending"]);
        expect(await names(reader)).toStrictEqual([]);
        await tx.commit();
        expect(await names(reader)).toStrictEqual(["pending"]);
      },
    );

    it("a rolled-back transaction leaves neither its rows nor its tables behind", async () => {
      const { writer, reader } = await twoConnections();
      const tx = await writer.begin("immediate");
      await insert(tx, "gone");
      await tx.executeScript("CREATE TABLE scratch (x); INSERT INTO scratch VALUES (1);");
      await tx.rollback();
      expect(await names(writer)).toStrictEqual([]);
      expect(await names(reader)).toStrictEqual([]);
      const { rows } = await reader.execute(
        "SELECT count(*) AS n FROM sqlite_schema WHERE name = 'scratch'",
      );
      expect(rows[0]?.n).toBe(0);
    });

    it("ROLLBACK TO undoes only the work after its savepoint and the transaction goes on", async () => {
      const { writer, reader } = await twoConnections();
      const tx = await writer.begin("immediate");
      await insert(tx, "before");
      await tx.execute("SAVEPOINT sp1");
      await insert(tx, "inside");
      await tx.execute("ROLLBACK TO sp1");
      expect(await names(tx)).toStrictEqual(["before"]);
      await insert(tx, "after");
      await tx.execute("RELEASE sp1");
      await tx.commit();
      expect(await names(reader)).toStrictEqual(["after", "before"]);
    });

    it("a released inner savepoint's work is discarded by ROLLBACK TO an outer one", async () => {
      const { writer, reader } = await twoConnections();
      const tx = await writer.begin("immediate");
      await insert(tx, "base");
      await tx.execute("SAVEPOINT outer_sp");
      await insert(tx, "outer");
      await tx.execute("SAVEPOINT inner_sp");
      await insert(tx, "inner");
      await tx.execute("RELEASE inner_sp");
      expect(await names(tx)).toStrictEqual(["base", "inner", "outer"]);
      await tx.execute("ROLLBACK TO outer_sp");
      await tx.execute("RELEASE outer_sp");
      await tx.commit();
      expect(await names(reader)).toStrictEqual(["base"]);
    });

    fx.needs("readersDuringWrite").it(
      "a released savepoint's work commits with the transaction",
      async () => {
        const { writer, reader } = await twoConnections();
        const tx = await writer.begin("immediate");
        await tx.execute("SAVEPOINT sp1");
        await insert(tx, "kept");
        await tx.execute("RELEASE sp1");
        expect(await names(reader), "RELEASE inside a transaction commits nothing").toStrictEqual(
          [],
        );
        await tx.commit();
        expect(await names(reader)).toStrictEqual(["kept"]);
      },
    );

    it("rolling back the transaction discards the work of released savepoints", async () => {
      const { writer } = await twoConnections();
      const tx = await writer.begin("immediate");
      await tx.execute("SAVEPOINT sp1");
      await insert(tx, "released");
      await tx.execute("RELEASE sp1");
      await tx.rollback();
      expect(await names(writer)).toStrictEqual([]);
    });

    it("a failed statement inside a transaction undoes only itself", async () => {
      const { writer, reader } = await twoConnections();
      const tx = await writer.begin("immediate");
      await insert(tx, "first");
      const error = await failureOf(() => insert(tx, "first"));
      expect(error.code).toBe("constraint_unique");
      expect(tx.active, "a failure that undid only itself leaves the transaction open").toBe(true);
      await insert(tx, "second");
      await tx.commit();
      expect(await names(reader)).toStrictEqual(["first", "second"]);
    });

    it("a transaction is active from begin until it commits or rolls back", async () => {
      const { writer } = await twoConnections();
      for (const ending of ["commit", "rollback"] as const) {
        const tx = await writer.begin("immediate");
        expect(tx.active, `after begin, to ${ending}`).toBe(true);
        await insert(tx, ending);
        expect(tx.active, `after a write, to ${ending}`).toBe(true);
        await tx[ending]();
        expect(tx.active, `after ${ending}`).toBe(false);
      }
    });

    fx.needs("local")
      .because("a server refuses PRAGMA max_page_count = N, the full disk this test stands in")
      .it(
        "a transaction SQLite rolls back by itself (SQLITE_FULL) is no longer active: its rollback succeeds and the connection begins again",
        async () => {
          const { writer, reader } = await twoConnections();
          const { rows } = await writer.execute("PRAGMA page_count");
          await writer.execute(`PRAGMA max_page_count = ${Number(rows[0]?.page_count) + 2}`);
          const tx = await writer.begin("immediate");
          await insert(tx, "before");
          const error = await failureOf(() => insert(tx, "x".repeat(64 * 1024)));
          expect(error.code).toBe("disk_full");
          expect(tx.active, "SQLite ended the transaction with the failure").toBe(false);
          await tx.rollback();
          expect(tx.active).toBe(false);
          const next = await writer.begin("immediate");
          await insert(next, "after");
          await next.commit();
          expect(await names(reader)).toStrictEqual(["after"]);
        },
      );

    it("a deferred transaction reads, then writes, then commits", async () => {
      const { writer, reader } = await twoConnections();
      await insert(writer, "existing");
      const tx = await writer.begin("deferred");
      expect(await names(tx)).toStrictEqual(["existing"]);
      await insert(tx, "added");
      await tx.commit();
      expect(await names(reader)).toStrictEqual(["added", "existing"]);
    });

    it("a finished transaction refuses every further call with transaction_closed", async () => {
      const { writer } = await twoConnections();
      for (const ending of ["commit", "rollback"] as const) {
        const tx = await writer.begin("immediate");
        await insert(tx, ending);
        await tx[ending]();
        const calls: Record<string, () => Promise<unknown>> = {
          execute: () => tx.execute("SELECT 1 AS one"),
          executeScript: () => tx.executeScript("SELECT 1;"),
          commit: () => tx.commit(),
          rollback: () => tx.rollback(),
        };
        for (const [call, action] of Object.entries(calls)) {
          const error = await failureOf(action);
          expect(error.code, `${call} after ${ending}`).toBe("transaction_closed");
        }
      }
      expect(await names(writer)).toStrictEqual(["commit"]);
    });

    it("a second begin while a transaction is open fails with transaction_active and the first goes on", async () => {
      const { writer, reader } = await twoConnections();
      const tx = await writer.begin("immediate");
      await insert(tx, "one");
      for (const mode of ["immediate", "deferred"] as const) {
        const error = await failureOf(() => writer.begin(mode));
        expect(error.code, mode).toBe("transaction_active");
      }
      await insert(tx, "two");
      await tx.commit();
      expect(await names(reader)).toStrictEqual(["one", "two"]);
      const next = await writer.begin("immediate");
      await next.rollback();
    });

    describe("a read-only connection", () => {
      const readOnly = { code: "read_only", sqliteCode: "SQLITE_READONLY" } as const;

      async function readOnlyConnection() {
        const location = await fx.database(`${SCHEMA}; INSERT INTO item (name) VALUES ('seed');`);
        return {
          writer: await fx.open(location, { create: false }),
          reader: await fx.open(location, { create: false, readOnly: true }),
        };
      }

      it("reads what is committed, including later commits of other connections", async () => {
        const { writer, reader } = await readOnlyConnection();
        expect(await names(reader)).toStrictEqual(["seed"]);
        await insert(writer, "later");
        expect(await names(reader)).toStrictEqual(["later", "seed"]);
        const tx = await reader.begin("deferred");
        expect(await names(tx)).toStrictEqual(["later", "seed"]);
        await tx.commit();
      });

      it("refuses a write statement with read_only", async () => {
        const { writer, reader } = await readOnlyConnection();
        expectTranslated(await failureOf(() => insert(reader, "nope")), readOnly);
        expectTranslated(await failureOf(() => reader.execute("DELETE FROM item")), readOnly);
        expect(await names(writer)).toStrictEqual(["seed"]);
      });

      it("refuses a script that writes with read_only", async () => {
        const { writer, reader } = await readOnlyConnection();
        expectTranslated(
          await failureOf(() => reader.executeScript("CREATE TABLE other (x);")),
          readOnly,
        );
        const { rows } = await writer.execute(
          "SELECT count(*) AS n FROM sqlite_schema WHERE name = 'other'",
        );
        expect(rows[0]?.n).toBe(0);
      });

      it("refuses to begin a write transaction with read_only", async () => {
        const { reader } = await readOnlyConnection();
        expectTranslated(await failureOf(() => reader.begin("immediate")), readOnly);
        // The refusal leaves the connection usable.
        expect(await names(reader)).toStrictEqual(["seed"]);
      });

      it("refuses a write inside a deferred transaction with read_only", async () => {
        const { writer, reader } = await readOnlyConnection();
        const tx = await reader.begin("deferred");
        expectTranslated(await failureOf(() => insert(tx, "nope")), readOnly);
        await tx.rollback();
        expect(await names(writer)).toStrictEqual(["seed"]);
      });
    });
  });
}
