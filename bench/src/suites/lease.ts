/**
 * Lease overhead (issue 3): the same journal-sized INSERT per transaction, the
 * raw driver against core's `ConnectionProvider` lease (`lease.transact(tx =>
 * tx.execute(…))` over the same plain table), each adapter. The bare port is
 * run alongside, so the table shows where the cost sits: driver → port → lease.
 */
import { libsqlDriver } from "@runledger/adapter-libsql";
import { nodeDriver } from "@runledger/adapter-node";
import { formatRate, interleave, type Sample, type Suite, spread, type Table } from "../harness.js";
import {
  type OpenSession,
  rawBetterSqlite3,
  rawLibsql,
  type Settings,
  throughLease,
  throughPort,
} from "../journal.js";
import { contender, EXPECTED, SHAPES } from "./port.js";

interface Adapter {
  readonly name: string;
  readonly raw: OpenSession;
  readonly port: OpenSession;
  readonly lease: OpenSession;
  /** The goal for lease/raw. */
  readonly goal: number;
}

const ADAPTERS: readonly Adapter[] = [
  {
    name: "adapter-node",
    raw: rawBetterSqlite3,
    port: throughPort(nodeDriver()),
    lease: throughLease(nodeDriver()),
    goal: 0.6,
  },
  {
    name: "adapter-libsql",
    raw: rawLibsql,
    port: throughPort(libsqlDriver()),
    lease: throughLease(libsqlDriver()),
    goal: 0.8,
  },
];

export const leaseSuite: Suite = {
  name: "lease",
  summary: "raw driver vs ConnectionProvider lease.transact, one INSERT per transaction",
  async run(context) {
    const seen = new Map<string, Settings>();
    const tables: Table[] = [];
    const cases: unknown[] = [];
    for (const shape of SHAPES) {
      const { count, warmup } = shape.size(context.quick);
      const rows: string[][] = [];
      for (const adapter of ADAPTERS) {
        const [raw, port, lease] = (await interleave(context, [
          contender(`${adapter.name} raw`, adapter.raw, shape, count, warmup, seen),
          contender(`${adapter.name} port`, adapter.port, shape, count, warmup, seen),
          contender(`${adapter.name} lease`, adapter.lease, shape, count, warmup, seen),
        ])) as [Sample, Sample, Sample];
        const ratio = lease.median / raw.median;
        const percent = (sample: Sample) => `±${(spread(sample) * 100).toFixed(1)}%`;
        rows.push([
          adapter.name,
          formatRate(raw.median),
          formatRate(port.median),
          formatRate(lease.median),
          `${(port.median / raw.median).toFixed(2)}×`,
          `${ratio.toFixed(2)}×`,
          shape.name === "per-transaction"
            ? `≥ ${adapter.goal}× ${ratio >= adapter.goal ? "met" : "MISSED"}`
            : "",
          `${percent(raw)} / ${percent(port)} / ${percent(lease)}`,
        ]);
        cases.push({
          shape: shape.name,
          adapter: adapter.name,
          unit: shape.unit,
          count,
          warmup,
          raw,
          port,
          lease,
          ratio,
          goal: shape.name === "per-transaction" ? adapter.goal : null,
        });
      }
      tables.push({
        title: `${shape.title} (${count.toLocaleString("en-US")} timed, ${shape.unit})`,
        headers: [
          "adapter",
          "raw",
          "port",
          "lease",
          "port/raw",
          "lease/raw",
          "goal",
          "spread raw/port/lease",
        ],
        rows,
      });
    }
    return {
      notes: [
        "durability: journal_mode=WAL, synchronous=NORMAL on every connection (checked inside a write transaction each run)",
        "raw: the port suite's raw sessions (better-sqlite3 prepared BEGIN IMMEDIATE/INSERT/COMMIT; @libsql/client transaction('write'))",
        "port: driver.open → configure → begin(immediate) / execute / commit",
        "lease: new ConnectionProvider({ driver }).open(file) → lease.transact(tx => tx.execute(INSERT, row)) per transaction",
        `each run: fresh file, untimed warm-up rows, then the timed section; one discarded round, then the three interleaved over ${context.runs} runs`,
      ],
      tables,
      data: { expected: EXPECTED, settings: Object.fromEntries(seen), cases },
    };
  },
};
