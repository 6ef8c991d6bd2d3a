/**
 * Port overhead: each adapter's raw driver against the same driver through
 * the port (Driver → DriverConnection → DriverTransaction), same file
 * settings, same rows.
 */
import { libsqlDriver } from "@runledger/adapter-libsql";
import { nodeDriver } from "@runledger/adapter-node";
import {
  type Contender,
  formatRate,
  interleave,
  type Sample,
  type Suite,
  type SuiteContext,
  spread,
  type Table,
  time,
} from "../harness.js";
import {
  type OpenSession,
  rawBetterSqlite3,
  rawLibsql,
  type Session,
  type Settings,
  throughPort,
} from "../journal.js";

interface Adapter {
  readonly name: string;
  readonly raw: OpenSession;
  readonly rawLabel: string;
  readonly port: OpenSession;
}

const ADAPTERS: readonly Adapter[] = [
  {
    name: "adapter-node",
    raw: rawBetterSqlite3,
    rawLabel: "better-sqlite3 prepared BEGIN IMMEDIATE / INSERT / COMMIT",
    port: throughPort(nodeDriver()),
  },
  {
    name: "adapter-libsql",
    raw: rawLibsql,
    rawLabel: 'client.transaction("write") / tx.execute / tx.commit',
    port: throughPort(libsqlDriver()),
  },
];

export interface Shape {
  readonly name: string;
  readonly title: string;
  readonly unit: string;
  /** Timed operations, and untimed warm-up operations on the same file before them. */
  size(quick: boolean): { readonly count: number; readonly warmup: number };
  run(session: Session, from: number, count: number): Promise<void>;
}

export const SHAPES: readonly Shape[] = [
  {
    name: "per-transaction",
    title: "one journal-sized INSERT per BEGIN IMMEDIATE transaction",
    unit: "tx/s",
    size: (quick) => (quick ? { count: 2_000, warmup: 200 } : { count: 20_000, warmup: 1_000 }),
    run: (session, from, count) => session.perTransaction(from, count),
  },
  {
    name: "one-transaction",
    title: "journal-sized INSERTs inside one BEGIN IMMEDIATE transaction",
    unit: "rows/s",
    size: (quick) => (quick ? { count: 1_000, warmup: 200 } : { count: 10_000, warmup: 1_000 }),
    run: (session, from, count) => session.oneTransaction(from, count),
  },
];

/** What every session must be running, or the comparison is not like for like. */
export const EXPECTED = { journalMode: "wal", synchronous: 1 } as const;

export const portSuite: Suite = {
  name: "port",
  summary: "raw driver vs the same driver through the port",
  async run(context) {
    const seen = new Map<string, Settings>();
    const tables: Table[] = [];
    const cases: unknown[] = [];
    for (const shape of SHAPES) {
      const { count, warmup } = shape.size(context.quick);
      const rows: string[][] = [];
      for (const adapter of ADAPTERS) {
        const [raw, port] = await interleave(context, [
          contender(`${adapter.name} raw`, adapter.raw, shape, count, warmup, seen),
          contender(`${adapter.name} port`, adapter.port, shape, count, warmup, seen),
        ]);
        rows.push(row(adapter.name, raw as Sample, port as Sample));
        cases.push({
          shape: shape.name,
          adapter: adapter.name,
          unit: shape.unit,
          count,
          warmup,
          raw,
          port,
          ratio: (port as Sample).median / (raw as Sample).median,
        });
      }
      tables.push({
        title: `${shape.title} (${count.toLocaleString("en-US")} timed, ${shape.unit})`,
        headers: [
          "adapter",
          `raw ${shape.unit}`,
          `port ${shape.unit}`,
          "port/raw",
          "spread raw/port",
        ],
        rows,
      });
    }
    return {
      notes: notes(context, seen),
      tables,
      data: { expected: EXPECTED, settings: Object.fromEntries(seen), cases },
    };
  },
};

/** A session of any kind running one shape: settings checked, warm-up rows, then the timed rows. */
export function contender(
  label: string,
  open: OpenSession,
  shape: Shape,
  count: number,
  warmup: number,
  seen: Map<string, Settings>,
): Contender {
  return {
    label,
    async run(file) {
      const session = await open(file);
      try {
        const settings = await session.settings();
        if (
          settings.journalMode !== EXPECTED.journalMode ||
          settings.synchronous !== EXPECTED.synchronous
        ) {
          throw new Error(
            `${label} runs ${JSON.stringify(settings)}, not ${JSON.stringify(EXPECTED)}`,
          );
        }
        seen.set(label, settings);
        await shape.run(session, 0, warmup);
        const timing = await time(count, () => shape.run(session, warmup, count));
        const rows = await session.rowCount();
        if (rows !== warmup + count)
          throw new Error(`${label} wrote ${rows} rows, not ${warmup + count}`);
        return timing;
      } finally {
        await session.close();
      }
    },
  };
}

function row(adapter: string, raw: Sample, port: Sample): string[] {
  const percent = (sample: Sample) => `±${(spread(sample) * 100).toFixed(1)}%`;
  return [
    adapter,
    formatRate(raw.median),
    formatRate(port.median),
    `${(port.median / raw.median).toFixed(2)}×`,
    `${percent(raw)} / ${percent(port)}`,
  ];
}

function notes(context: SuiteContext, seen: Map<string, Settings>): string[] {
  const versions = ADAPTERS.map(
    (adapter) => `${adapter.name} SQLite ${seen.get(`${adapter.name} raw`)?.sqliteVersion}`,
  );
  return [
    "durability: journal_mode=WAL, synchronous=NORMAL on every connection (checked inside a write transaction each run)",
    `engines: ${versions.join(", ")}`,
    ...ADAPTERS.map((adapter) => `raw ${adapter.name}: ${adapter.rawLabel}`),
    "port: driver.open → configure({ journalMode: wal, synchronous: normal }) → begin(immediate) / execute / commit",
    `each run: fresh file, untimed warm-up rows on it, then the timed section; one discarded round, then raw and port interleaved over ${context.runs} runs`,
  ];
}
