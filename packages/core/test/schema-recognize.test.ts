import { describe, expect, it } from "vitest";
import type { Executor, QueryResult } from "../src/port/driver.js";
import type { Row } from "../src/port/values.js";
import { compareObjects, readLiveSchema } from "../src/schema/recognize.js";

/** An executor that answers every statement with the given rows, and keeps what it was asked. */
function answering(rows: Row[]): Executor & { statements: string[] } {
  const statements: string[] = [];
  return {
    statements,
    async execute(sql: string): Promise<QueryResult> {
      statements.push(sql);
      return { rows, changes: 0, lastInsertRowid: undefined };
    },
  };
}

/** The header row: application_id, user_version and journal_mode in the type, name and tbl_name columns. */
const header = (applicationId: number, userVersion: number, journalMode: string): Row => ({
  position: 0,
  type: applicationId,
  name: userVersion,
  tbl_name: journalMode,
  sql: null,
});
const object = (position: number, name: string): Row => ({
  position,
  type: "table",
  name,
  tbl_name: name,
  sql: `CREATE TABLE ${name} (x)`,
});
const ours = header(1380729927, 1, "WAL");

describe("readLiveSchema", () => {
  it("reads the header, the journal mode and every object in one statement", async () => {
    const executor = answering([ours, object(1, "a"), object(2, "b")]);
    const live = await readLiveSchema(executor);
    expect(executor.statements).toHaveLength(1);
    expect(live.applicationId).toBe(1380729927);
    expect(live.userVersion).toBe(1);
    expect(live.journalMode).toBe("wal");
    expect(live.objects.map((o) => o.name)).toEqual(["a", "b"]);
  });

  it("puts objects that arrive out of order back in rowid order", async () => {
    const live = await readLiveSchema(
      answering([object(3, "c"), ours, object(1, "a"), object(2, "b")]),
    );
    expect(live.objects.map((o) => o.name)).toEqual(["a", "b", "c"]);
  });

  it("reads a file with no objects as its header and no objects", async () => {
    const live = await readLiveSchema(answering([header(0, 0, "delete")]));
    expect(live).toEqual({ applicationId: 0, userVersion: 0, journalMode: "delete", objects: [] });
  });
});

describe("compareObjects", () => {
  const a = { type: "table" as const, name: "a", tableName: "a", sql: "CREATE TABLE a (x)" };
  const b = { type: "index" as const, name: "b", tableName: "a", sql: "CREATE INDEX b ON a (x)" };

  it("finds nothing when every object is equal and in order", () => {
    expect(compareObjects([a, b], [a, b])).toEqual([]);
  });

  it("reports the order when the same objects come in another order", () => {
    expect(compareObjects([a, b], [b, a])).toEqual([
      { change: "different", type: "schema", name: "object order" },
    ]);
  });

  it("reports a different statement, a missing and an extra object", () => {
    const changed = { ...b, sql: "CREATE INDEX b ON a (x DESC)" };
    const extra = { ...b, name: "c" };
    expect(compareObjects([a, b], [a, changed])).toEqual([
      { change: "different", type: "index", name: "b", expected: b.sql, found: changed.sql },
    ]);
    expect(compareObjects([a, b], [a, extra])).toEqual([
      { change: "missing", type: "index", name: "b" },
      { change: "extra", type: "index", name: "c", found: extra.sql },
    ]);
  });
});
