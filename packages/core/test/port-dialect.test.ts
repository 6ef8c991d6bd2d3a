import { Kysely } from "kysely";
import { describe, expect, it } from "vitest";
import { RunledgerDialect } from "../src/port/dialect.js";
import type { Executor, QueryResult } from "../src/port/driver.js";
import { RunledgerError } from "../src/port/errors.js";
import type { SqlValue } from "../src/port/values.js";

interface Database {
  item: { id: number; name: string };
}

/** An executor that records what it is asked and answers from a script. */
function recordingExecutor(answer: Partial<QueryResult>) {
  const calls: { sql: string; params: readonly SqlValue[] }[] = [];
  const executor: Executor = {
    async execute(sql, params = []) {
      calls.push({ sql, params });
      return { rows: [], changes: 0, lastInsertRowid: undefined, ...answer };
    },
  };
  return { calls, executor };
}

describe("RunledgerDialect", () => {
  it("runs a typed query through the executor with SQLite SQL and positional parameters", async () => {
    const { calls, executor } = recordingExecutor({ rows: [{ id: 1, name: "a" }] });
    const db = new Kysely<Database>({ dialect: new RunledgerDialect(executor) });
    const rows = await db.selectFrom("item").selectAll().where("name", "=", "a").execute();
    expect(rows).toStrictEqual([{ id: 1, name: "a" }]);
    expect(calls).toStrictEqual([{ sql: 'select * from "item" where "name" = ?', params: ["a"] }]);
  });

  it("reports changes and the inserted rowid as Kysely expects", async () => {
    const { executor } = recordingExecutor({ changes: 1, lastInsertRowid: 2n ** 60n });
    const db = new Kysely<Database>({ dialect: new RunledgerDialect(executor) });
    const result = await db.insertInto("item").values({ id: 7, name: "x" }).executeTakeFirst();
    expect(result.numInsertedOrUpdatedRows).toBe(1n);
    expect(result.insertId).toBe(2n ** 60n);
  });

  it("asks for the executor on every query, so core can hand in the transaction in progress", async () => {
    const first = recordingExecutor({});
    const second = recordingExecutor({});
    let current = first.executor;
    const db = new Kysely<Database>({ dialect: new RunledgerDialect(() => current) });
    await db.selectFrom("item").select("id").execute();
    current = second.executor;
    await db.selectFrom("item").select("name").execute();
    expect(first.calls).toHaveLength(1);
    expect(second.calls).toHaveLength(1);
  });

  it("refuses Kysely transactions with kysely_transaction_refused", async () => {
    const { calls, executor } = recordingExecutor({});
    const db = new Kysely<Database>({ dialect: new RunledgerDialect(executor) });
    const attempt = db.transaction().execute(async () => "never");
    await expect(attempt).rejects.toBeInstanceOf(RunledgerError);
    await expect(attempt).rejects.toMatchObject({ code: "kysely_transaction_refused" });
    expect(calls).toStrictEqual([]);
  });
});
