/**
 * What an engine asks of a run (issue 29), adapter-node:
 *
 * 1. copy — a root built from another: `apply({ copy: { target: { from } } })`
 *    of one small file against the same apply copying a directory of 100,000
 *    files, in one run holding both. By reference, the directory costs what
 *    the file does (goal: within 2×). Each copy is its own transaction, the
 *    two alternated in rounds so drift falls on both; the statements each
 *    issues are counted through a tracing driver.
 * 2. keyed read — `r.journal.get(key)` and the newest keyed event by prefix
 *    (`list({ keyPrefix, order: "desc", limit: 1 })`) on a journal of 100,000
 *    events, against the raw driver running the same SELECT.
 * 3. listing runs — `store.list` on a catalog of 10,000 runs: every run in
 *    one status, and every run of every status in one call, against the raw
 *    driver running the same SELECT (goal: 10,000 runs in under 50 ms). The
 *    catalog is made by a store from one real run; the other rows are
 *    inserted as the store writes them, since a listing reads only the
 *    catalog.
 */
import { nodeDriver } from "@runledger/adapter-node";
import { RunStore } from "@runledger/core";
import type { Driver, DriverConnection, DriverTransaction } from "@runledger/core/port";
import Database from "better-sqlite3";
import { formatRate, median, type Suite, type SuiteContext, type Table, time } from "../harness.js";

/** A driver that counts every statement its connections and transactions run. */
function counting(inner: Driver): { driver: Driver; count: () => number } {
  let statements = 0;
  const session = (transaction: DriverTransaction): DriverTransaction => ({
    get active() {
      return transaction.active;
    },
    execute: (sql, params) => {
      statements++;
      return transaction.execute(sql, params);
    },
    executeScript: (sql) => {
      statements++;
      return transaction.executeScript(sql);
    },
    commit: () => {
      statements++;
      return transaction.commit();
    },
    rollback: () => {
      statements++;
      return transaction.rollback();
    },
  });
  const driver: Driver = {
    ...inner,
    name: `${inner.name}+counting`,
    async open(location, options): Promise<DriverConnection> {
      const connection = await inner.open(location, options);
      return {
        ...connection,
        execute: (sql, params) => {
          statements++;
          return connection.execute(sql, params);
        },
        executeScript: (sql) => {
          statements++;
          return connection.executeScript(sql);
        },
        begin: async (mode) => {
          statements++;
          return session(await connection.begin(mode));
        },
        configure: (settings) => connection.configure(settings),
        close: () => connection.close(),
      };
    },
  };
  return { driver, count: () => statements };
}

export const engineSuite: Suite = {
  name: "engine",
  summary:
    "copy of a 100,000-file directory vs one file; keyed journal reads vs raw SELECT; listing 10,000 runs",
  async run(context) {
    const files = context.quick ? 2_000 : 100_000;
    const events = context.quick ? 2_000 : 100_000;
    const rounds = context.quick ? 3 : context.runs;
    const copiesPerRound = context.quick ? 50 : 500;

    // 1. copy
    const file = context.freshFile();
    const traced = counting(nodeDriver());
    const store = new RunStore({ driver: traced.driver });
    const lease = await store.open(file, { create: { workflowId: "bench", runId: "engine" } });
    const batch = 10_000;
    for (let start = 0; start < files; start += batch) {
      const put: Record<string, string> = {};
      for (let i = start; i < Math.min(files, start + batch); i++) {
        put[`big/f${String(i).padStart(6, "0")}.json`] = `{"i":${i},"pad":"${"x".repeat(300)}"}`;
      }
      await lease.transact((tx) => tx.workspace.apply({ put }));
    }
    await lease.transact((tx) => tx.workspace.apply({ put: { "one.json": '{"one":1}' } }));
    let n = 0;
    const copyRound = async (from: string) => {
      const before = traced.count();
      const timing = await time(copiesPerRound, async () => {
        for (let i = 0; i < copiesPerRound; i++) {
          const target = `copies/${from}-${n++}`;
          await lease.transact((tx) => tx.workspace.apply({ copy: { [target]: { from } } }));
        }
      });
      return {
        rate: (timing.ops * 1e9) / Number(timing.ns),
        statements: (traced.count() - before) / copiesPerRound,
      };
    };
    await copyRound("one.json");
    await copyRound("big");
    const one: number[] = [];
    const big: number[] = [];
    const statements = { one: 0, big: 0 };
    for (let round = 0; round < rounds; round++) {
      const order = round % 2 === 0 ? ["one.json", "big"] : ["big", "one.json"];
      for (const from of order) {
        const result = await copyRound(from);
        (from === "big" ? big : one).push(result.rate);
        statements[from === "big" ? "big" : "one"] = result.statements;
      }
    }
    await lease.release();
    await store.close();
    const ratio = median(one) / median(big);

    // 2. keyed reads
    const journalFile = context.freshFile();
    const store2 = new RunStore({ driver: nodeDriver() });
    const run = await store2.open(journalFile, { create: { workflowId: "bench", runId: "keys" } });
    for (let start = 0; start < events; start += batch) {
      await run.transact(async (tx) => {
        for (let i = start; i < Math.min(events, start + batch); i++) {
          await tx.journal.append({ i }, { key: `checkpoint:${String(i).padStart(8, "0")}` });
        }
      });
    }
    const reads = context.quick ? 2_000 : 20_000;
    const keyOf = (i: number) => `checkpoint:${String((i * 7919) % events).padStart(8, "0")}`;
    const api = await time(reads, () =>
      run.read(async (r) => {
        for (let i = 0; i < reads; i++) await r.journal.get(keyOf(i));
      }),
    );
    const newest = await time(reads, () =>
      run.read(async (r) => {
        for (let i = 0; i < reads; i++) {
          await r.journal.list({ keyPrefix: "checkpoint:", order: "desc", limit: 1 });
        }
      }),
    );
    await run.release();
    await store2.close();
    const db = new Database(journalFile, { readonly: true });
    const byKey = db.prepare(
      "SELECT sequence, event_id, idempotency_key, record, root_id, written_at FROM journal WHERE idempotency_key = ?",
    );
    const rawGet = await time(reads, async () => {
      db.transaction(() => {
        for (let i = 0; i < reads; i++) byKey.get(keyOf(i));
      })();
    });
    db.close();
    const perSecond = (t: { ops: number; ns: bigint }) => (t.ops * 1e9) / Number(t.ns);

    // 3. listing runs
    const listing = await listingRuns(context, rounds);

    const tables: Table[] = [
      {
        title: `copy by reference (adapter-node, ${copiesPerRound} copies a round, ${rounds} rounds alternated)`,
        headers: ["copied", "copies/s", "statements a copy", "vs one file", "goal"],
        rows: [
          ["one 40-byte file", formatRate(median(one)), statements.one.toFixed(1), "1.00×", ""],
          [
            `a directory of ${files.toLocaleString("en-US")} files`,
            formatRate(median(big)),
            statements.big.toFixed(1),
            `${ratio.toFixed(2)}× the time`,
            `≤ 2× ${ratio <= 2 ? "met" : "MISSED"}`,
          ],
        ],
      },
      {
        title: `keyed journal reads (adapter-node, ${events.toLocaleString("en-US")} keyed events, ${reads.toLocaleString("en-US")} reads in one snapshot)`,
        headers: ["read", "reads/s", "vs raw SELECT by key"],
        rows: [
          [
            "raw better-sqlite3 SELECT … WHERE idempotency_key = ?",
            formatRate(perSecond(rawGet)),
            "1.00×",
          ],
          [
            "r.journal.get(key)",
            formatRate(perSecond(api)),
            `${(perSecond(api) / perSecond(rawGet)).toFixed(2)}×`,
          ],
          [
            'r.journal.list({ keyPrefix, order: "desc", limit: 1 })',
            formatRate(perSecond(newest)),
            `${(perSecond(newest) / perSecond(rawGet)).toFixed(2)}×`,
          ],
        ],
      },
      listing.table,
    ];
    return {
      notes: [
        "durability: journal_mode=WAL, synchronous=NORMAL (the store's default)",
        "copy: each copy is one lease.transact with one apply; the directory's nodes are not in the node cache's way (a copy reads only the path to its source)",
      ],
      tables,
      data: {
        files,
        events,
        rounds,
        copiesPerRound,
        one,
        big,
        statements,
        ratio,
        reads: { api, newest, rawGet },
        listing: listing.data,
      },
    };
  },
};

/** The statuses the listed runs are spread over, one in four each. */
const LISTED_STATUSES = ["running", "interrupted", "completed", "failed"] as const;

/** Part 3: store.list on a catalog of 10,000 runs, against the same SELECT on the raw driver. */
async function listingRuns(
  context: SuiteContext,
  rounds: number,
): Promise<{ table: Table; data: unknown }> {
  const runs = 10_000;
  const catalog = context.freshFile();
  const store = new RunStore({ driver: nodeDriver(), catalog });
  const first = await store.open(context.freshFile(), {
    create: { workflowId: "bench", runId: "listed-0" },
  });
  await first.release();
  const db = new Database(catalog);
  const insert = db.prepare(
    "INSERT INTO runs (location, workflow_id, run_id, status, stop_reason, created_at, updated_at, last_sequence) VALUES (?, ?, ?, ?, NULL, ?, ?, ?)",
  );
  db.transaction(() => {
    for (let i = 1; i < runs; i++) {
      const at = 1_700_000_000_000 + i * 1_000;
      const status = LISTED_STATUSES[i % LISTED_STATUSES.length]!;
      insert.run(
        `/runs/run-${String(i).padStart(5, "0")}.db`,
        `wf-${i % 10}`,
        `listed-${i}`,
        status,
        at,
        at,
        i,
      );
    }
  })();
  db.close();
  const select = (statuses: readonly string[]) =>
    "SELECT location, workflow_id, run_id, status, stop_reason, created_at, updated_at, last_sequence " +
    `FROM runs WHERE status IN (${statuses.map(() => "?").join(", ")}) ORDER BY created_at DESC, location LIMIT ?`;
  const raw = new Database(catalog, { readonly: true });
  const cases = [
    { label: 'every run in one status (status: "interrupted")', statuses: ["interrupted"] },
    {
      label: `every run, by status (all ${LISTED_STATUSES.length} statuses)`,
      statuses: [...LISTED_STATUSES],
    },
  ];
  const rows: string[][] = [];
  const data: Record<string, unknown> = {};
  for (const { label, statuses } of cases) {
    const statement = raw.prepare(select(statuses));
    const apiMs: number[] = [];
    const rawMs: number[] = [];
    let found = 0;
    for (let round = 0; round < Math.max(rounds, 5) + 1; round++) {
      const api = await time(1, async () => {
        found = (await store.list({ status: statuses as never, limit: runs })).runs.length;
      });
      const direct = await time(1, async () => {
        statement.all(...statuses, runs + 1);
      });
      if (round === 0) continue; // the first of each warms the caches
      apiMs.push(Number(api.ns) / 1e6);
      rawMs.push(Number(direct.ns) / 1e6);
    }
    const ms = median(apiMs);
    rows.push([
      label,
      found.toLocaleString("en-US"),
      `${median(rawMs).toFixed(1)} ms`,
      `${ms.toFixed(1)} ms`,
      `${(ms / median(rawMs)).toFixed(2)}×`,
      found === runs ? `< 50 ms ${ms < 50 ? "met" : "MISSED"}` : "",
    ]);
    data[label] = { found, apiMs, rawMs };
  }
  raw.close();
  await store.close();
  return {
    table: {
      title: `listing runs (adapter-node, a catalog of ${runs.toLocaleString("en-US")} runs, one store.list call, median of ${Math.max(rounds, 5)})`,
      headers: ["listed", "runs", "raw better-sqlite3 SELECT", "store.list", "vs raw", "goal"],
      rows,
    },
    data,
  };
}
