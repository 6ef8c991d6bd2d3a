/**
 * Values family (docs/contracts.md, the port): every SqlValue goes in as a parameter and comes
 * back exactly — same JavaScript type, same bytes, stored in the SQLite
 * storage class a reader of the file would expect.
 */
import type { SqlValue } from "@runledger/core/port";
import { describe, expect, it } from "vitest";
import { type Fixtures, sameBytes } from "../fixtures.js";

const MiB = 1024 * 1024;

interface ValueCase {
  readonly label: string;
  readonly value: () => SqlValue;
  /** typeof(v) in SQL; omitted where the port does not promise one (integral JS numbers). */
  readonly storedAs?: "null" | "integer" | "real" | "text" | "blob";
  /** Why this case cannot hold on a remote subject, if it cannot. */
  readonly notRemote?: string;
}

/** Text of exactly `bytes` UTF-8 bytes mixing one-, two-, three- and four-byte characters. */
function textOfBytes(bytes: number): string {
  const unit = "ledger é 日 😀 ";
  const unitBytes = new TextEncoder().encode(unit).length;
  return unit.repeat(Math.floor(bytes / unitBytes)) + "x".repeat(bytes % unitBytes);
}

/** Bytes that differ at every offset in a non-repeating-by-256 way, so a shift or truncation shows. */
function patternBytes(length: number): Uint8Array {
  const bytes = new Uint8Array(length);
  for (let i = 0; i < length; i++) bytes[i] = (i * 31 + (i >>> 8) * 7 + 11) & 0xff;
  return bytes;
}

const CASES: readonly ValueCase[] = [
  { label: "null", value: () => null, storedAs: "null" },
  { label: "zero", value: () => 0 },
  { label: "minus one", value: () => -1 },
  { label: "2^53+1 as bigint", value: () => 2n ** 53n + 1n, storedAs: "integer" },
  { label: "-(2^63) as bigint", value: () => -(2n ** 63n), storedAs: "integer" },
  { label: "1.5", value: () => 1.5, storedAs: "real" },
  { label: "the empty string", value: () => "", storedAs: "text" },
  {
    label: "unicode text with an astral character",
    value: () => "Grüße — 日本語 — 😀 𝄞",
    storedAs: "text",
  },
  { label: "1 MiB of text", value: () => textOfBytes(MiB), storedAs: "text" },
  { label: "the empty blob", value: () => new Uint8Array(0), storedAs: "blob" },
  { label: "a small blob", value: () => Uint8Array.of(0, 1, 2, 254, 255), storedAs: "blob" },
  {
    label: "a 10 MiB blob",
    value: () => patternBytes(10 * MiB),
    storedAs: "blob",
    notRemote:
      "sqld refuses one parameter this large (too_big); the workspace stores files in 256 KiB chunks",
  },
];

function expectSameValue(actual: SqlValue | undefined, expected: SqlValue): void {
  if (expected instanceof Uint8Array) {
    expect(actual).toBeInstanceOf(Uint8Array);
    const bytes = actual as Uint8Array;
    expect(Object.getPrototypeOf(bytes), "a plain Uint8Array, not a Buffer").toBe(
      Uint8Array.prototype,
    );
    expect(bytes.byteLength).toBe(expected.byteLength);
    expect(sameBytes(bytes, expected), "the same bytes").toBe(true);
    return;
  }
  expect(typeof actual).toBe(typeof expected);
  if (typeof expected === "string" && expected.length > 4096) {
    expect(actual === expected, "the same text").toBe(true);
  } else {
    expect(actual).toBe(expected);
  }
}

export function describeValues(fx: Fixtures): void {
  describe("values", () => {
    async function valueTable() {
      return fx.open(await fx.database("CREATE TABLE v (id INTEGER PRIMARY KEY, x)"));
    }

    for (const c of CASES) {
      const test = c.notRemote === undefined ? it : fx.needs("local").because(c.notRemote).it;
      test(`round-trips ${c.label} through a parameter`, async () => {
        const db = await valueTable();
        const value = c.value();
        await db.execute("INSERT INTO v (id, x) VALUES (1, ?)", [value]);
        const { rows } = await db.execute(
          "SELECT x, typeof(x) AS storage, length(CAST(x AS BLOB)) AS bytes FROM v WHERE id = 1",
        );
        expect(rows).toHaveLength(1);
        expectSameValue(rows[0]?.x, value);
        if (c.storedAs !== undefined) expect(rows[0]?.storage).toBe(c.storedAs);
        if (typeof value === "string") {
          expect(rows[0]?.bytes, "stored as UTF-8").toBe(new TextEncoder().encode(value).length);
        }
      });
    }

    it("stores an astral character as one code point, not a surrogate pair", async () => {
      const db = await valueTable();
      const text = "a😀𝄞b";
      await db.execute("INSERT INTO v (id, x) VALUES (1, ?)", [text]);
      const { rows } = await db.execute("SELECT length(x) AS chars, hex(x) AS hex FROM v");
      expect(rows[0]?.chars).toBe([...text].length);
      expect(rows[0]?.hex).toBe("61F09F9880F09D849E62");
    });

    it("reads columns named like an array's or object's own properties by their values", async () => {
      const db = await valueTable();
      const { rows } = await db.execute(
        "SELECT 0 AS length, 'x' AS constructor, 7 AS toString, 1 AS \"0\"",
      );
      expect(rows).toStrictEqual([{ length: 0, constructor: "x", toString: 7, "0": 1 }]);
    });

    it("binds a blob that is a view into a larger buffer as exactly the viewed bytes", async () => {
      const db = await valueTable();
      const whole = patternBytes(64);
      const view = whole.subarray(5, 13);
      await db.execute("INSERT INTO v (id, x) VALUES (1, ?)", [view]);
      const { rows } = await db.execute("SELECT x, hex(x) AS hex FROM v");
      expectSameValue(rows[0]?.x, view);
      expect(rows[0]?.hex).toBe(Buffer.from(view).toString("hex").toUpperCase());
    });

    it("returns integers inside the safe range as number and beyond it as bigint", async () => {
      const db = await valueTable();
      const { rows } = await db.execute(
        "SELECT 42 AS small, -1 AS minus, 9007199254740991 AS maxSafe, -9007199254740991 AS minSafe, " +
          "9007199254740992 AS aboveSafe, -9007199254740992 AS belowSafe, 9223372036854775807 AS max",
      );
      expect(rows[0]).toStrictEqual({
        small: 42,
        minus: -1,
        maxSafe: Number.MAX_SAFE_INTEGER,
        minSafe: Number.MIN_SAFE_INTEGER,
        aboveSafe: 2n ** 53n,
        belowSafe: -(2n ** 53n),
        max: 2n ** 63n - 1n,
      });
    });

    it("returns a bigint parameter inside the safe range as number", async () => {
      const db = await valueTable();
      await db.execute("INSERT INTO v (id, x) VALUES (1, ?)", [42n]);
      const { rows } = await db.execute("SELECT x, typeof(x) AS storage FROM v");
      expect(rows[0]?.x).toBe(42);
      expect(rows[0]?.storage).toBe("integer");
    });

    it("keeps integral numbers integral in an INTEGER column", async () => {
      const db = await fx.open(
        await fx.database("CREATE TABLE n (id INTEGER PRIMARY KEY, i INTEGER)"),
      );
      await db.execute("INSERT INTO n (id, i) VALUES (1, ?), (2, ?), (3, ?)", [
        0,
        -1,
        Number.MAX_SAFE_INTEGER,
      ]);
      const { rows } = await db.execute("SELECT i, typeof(i) AS storage FROM n ORDER BY id");
      expect(rows).toStrictEqual([
        { i: 0, storage: "integer" },
        { i: -1, storage: "integer" },
        { i: Number.MAX_SAFE_INTEGER, storage: "integer" },
      ]);
    });

    it("round-trips values through a transaction session too", async () => {
      const db = await valueTable();
      const big = 2n ** 53n + 1n;
      const blob = patternBytes(1000);
      const tx = await db.begin("immediate");
      await tx.execute("INSERT INTO v (id, x) VALUES (1, ?), (2, ?), (3, ?)", [big, blob, null]);
      const { rows } = await tx.execute("SELECT x FROM v ORDER BY id");
      await tx.commit();
      expect(rows[0]?.x).toBe(big);
      expectSameValue(rows[1]?.x, blob);
      expect(rows[2]?.x).toBeNull();
    });

    it("reports rows changed and the last rowid for a write, and neither for a read", async () => {
      const db = await valueTable();
      const insert = await db.execute("INSERT INTO v (id, x) VALUES (7, 'a'), (8, 'b'), (9, 'c')");
      expect(insert.changes).toBe(3);
      expect(insert.lastInsertRowid).toBe(9);
      expect(insert.rows).toStrictEqual([]);

      const update = await db.execute("UPDATE v SET x = 'z' WHERE id >= 8");
      expect(update.changes).toBe(2);

      const read = await db.execute("SELECT id FROM v ORDER BY id");
      expect(read.changes).toBe(0);
      expect(read.lastInsertRowid).toBeUndefined();
      expect(read.rows).toStrictEqual([{ id: 7 }, { id: 8 }, { id: 9 }]);
    });

    it("reports a last rowid beyond 2^53 as an exact bigint", async () => {
      const db = await valueTable();
      const rowid = 2n ** 62n + 3n;
      const insert = await db.execute("INSERT INTO v (id, x) VALUES (?, 'far')", [rowid]);
      expect(insert.lastInsertRowid).toBe(rowid);
    });
  });
}
