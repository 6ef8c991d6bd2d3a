/**
 * The one keyset-paging loop every long read in core goes through: it must
 * start after the given key, continue after each page's last key, stop at
 * the first short page, and refuse a page size that would never advance.
 */
import { describe, expect, it } from "vitest";
import { keysetPages, keysetRows } from "../src/port/keyset.js";

/** A sorted table of numbers, read the way SQL would: `WHERE n > ? ORDER BY n LIMIT ?`. */
function table(size: number) {
  const rows = Array.from({ length: size }, (_, i) => ({ n: (i + 1) * 10 }));
  const asked: [number, number][] = [];
  const page = async (after: number, limit: number) => {
    asked.push([after, limit]);
    return rows.filter((row) => row.n > after).slice(0, limit);
  };
  return { rows, asked, page };
}

async function collect<T>(source: AsyncIterable<T>): Promise<T[]> {
  const out: T[] = [];
  for await (const item of source) out.push(item);
  return out;
}

describe("keyset paging", () => {
  it("pages after each page's last key and stops at the first short page", async () => {
    const { asked, page } = table(7);
    const pages = await collect(keysetPages({ start: 0, page, keyOf: (r) => r.n, limit: 3 }));
    expect(pages.map((rows) => rows.map((r) => r.n))).toStrictEqual([
      [10, 20, 30],
      [40, 50, 60],
      [70],
    ]);
    expect(asked).toStrictEqual([
      [0, 3],
      [30, 3],
      [60, 3],
    ]);
  });

  it("asks once more after a full last page and yields no empty page", async () => {
    const { asked, page } = table(4);
    const pages = await collect(keysetPages({ start: 0, page, keyOf: (r) => r.n, limit: 2 }));
    expect(pages).toHaveLength(2);
    expect(asked.at(-1)).toStrictEqual([40, 2]);
  });

  it("starts after the given key and streams rows in order", async () => {
    const { page } = table(5);
    const rows = await collect(keysetRows({ start: 25, page, keyOf: (r) => r.n, limit: 2 }));
    expect(rows.map((r) => r.n)).toStrictEqual([30, 40, 50]);
  });

  it("stops reading when the consumer stops", async () => {
    const { asked, page } = table(100);
    for await (const row of keysetRows({ start: 0, page, keyOf: (r) => r.n, limit: 10 })) {
      if (row.n === 150) break;
    }
    expect(asked).toHaveLength(2);
  });

  it.each([0, -1, 1.5, Number.NaN])(
    "refuses a page size of %s with invalid_argument",
    async (limit) => {
      const { page } = table(3);
      await expect(
        collect(keysetRows({ start: 0, page, keyOf: (r) => r.n, limit })),
      ).rejects.toMatchObject({ code: "invalid_argument" });
    },
  );
});
