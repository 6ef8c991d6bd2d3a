/**
 * verify's CHECK scan (src/schema/checks.ts) is derived from the manifest's
 * own SQL: every CHECK of every table in SCHEMA_V1 is found, with its
 * expression whole and its table's key, so none is left to integrity_check
 * (which skips them on a read-only connection).
 */
import { describe, expect, it } from "vitest";
import { SCHEMA_V1 } from "../src/run/schema-v1.js";
import { checkConstraints, checkExpressions } from "../src/schema/checks.js";

const tables = SCHEMA_V1.objects.filter((object) => object.type === "table");

describe("the CHECK constraints verify scans", () => {
  it("covers every CHECK of every table in SCHEMA_V1, each expression whole", () => {
    const derived = checkConstraints(SCHEMA_V1);
    for (const table of tables) {
      const sql = table.sql!;
      const mine = derived.filter((check) => check.table === table.name);
      // Counted apart from the parser: each "CHECK (" of the statement is one constraint.
      expect(mine.length, table.name).toBe(sql.match(/\bCHECK \(/g)?.length ?? 0);
      for (const { expression } of mine) {
        expect(sql, table.name).toContain(`CHECK (${expression})`);
        // Whole: its parentheses balance.
        let depth = 0;
        for (const c of expression) depth += c === "(" ? 1 : c === ")" ? -1 : 0;
        expect(depth, expression).toBe(0);
      }
    }
    expect(derived.length).toBe(
      tables.reduce((sum, table) => sum + (table.sql!.match(/\bCHECK \(/g)?.length ?? 0), 0),
    );
    expect(derived.length).toBeGreaterThanOrEqual(20);
  });

  it("names each table's rows by its primary key column, or rowid", () => {
    const keys = Object.fromEntries(checkConstraints(SCHEMA_V1).map((c) => [c.table, c.key]));
    expect(keys).toEqual({
      runledger_identity: "application_id",
      run: "singleton",
      journal: "sequence",
      journal_anchor: "singleton",
      workspace_object: "rowid",
      workspace_chunk: "prefix_digest",
      workspace_pin: "name",
      run_transaction: "key",
    });
  });

  it("takes the whole expression of a multi-line table CHECK, and nothing inside a string literal", () => {
    const sql = `CREATE TABLE t (
  a TEXT CHECK (a IN ('CHECK (x)', 'b)')),
  b INTEGER,
  CHECK ((a IS NULL AND b IS NULL)
    OR (b > 0))
)`;
    expect(checkExpressions(sql)).toEqual([
      "a IN ('CHECK (x)', 'b)')",
      "(a IS NULL AND b IS NULL)\n    OR (b > 0)",
    ]);
  });
});
