/**
 * Large files (issue 5): peak RSS while writing a 100 MiB workspace file as a
 * stream (`AsyncIterable<Uint8Array>` of 1 MiB pieces, never whole in memory)
 * and while reading it back with `r.workspace.stream(path)`, each adapter.
 * Each case runs in a process of its own, so its baseline is clean: the
 * baseline is the RSS once the run is open, after a collection; the peak is
 * sampled every 10 ms and at every piece. Goal: peak ≤ baseline + 64 MiB.
 *
 * This module is also the child process: `node large-file.js <adapter> <write|read> <file> <MiB>`.
 */
import { createHash, randomFillSync } from "node:crypto";
import { libsqlDriver } from "@runledger/adapter-libsql";
import { nodeDriver } from "@runledger/adapter-node";
import { RunStore } from "@runledger/core";
import type { Driver } from "@runledger/core/port";
import {
  collectGarbage,
  databaseSize,
  formatMib,
  isChildEntry,
  mib,
  reportToParent,
  runChild,
  type Suite,
  trackPeakRss,
} from "../harness.js";

const PATH = "data/large.bin";
const PIECE = 1 << 20;
const GOAL_MIB = 64;

interface Figures {
  readonly adapter: string;
  readonly mode: "write" | "read";
  readonly bytes: number;
  readonly sha256: string;
  readonly ms: number;
  readonly rssBaseline: number;
  readonly rssPeak: number;
  /** The heap after the work, after a collection: what stayed. */
  readonly heapAfter: number;
}

const DRIVERS: Readonly<Record<string, () => Driver>> = {
  "adapter-node": () => nodeDriver(),
  "adapter-libsql": () => libsqlDriver(),
};

async function child(
  adapter: string,
  mode: "write" | "read",
  file: string,
  size: number,
): Promise<Figures> {
  const driver = DRIVERS[adapter];
  if (driver === undefined) throw new Error(`unknown adapter ${adapter}`);
  const store = new RunStore({ driver: driver() });
  try {
    const lease = await store.open(
      file,
      mode === "write" ? { create: { workflowId: "bench", runId: "large-file" } } : {},
    );
    collectGarbage();
    const rss = trackPeakRss();
    const rssBaseline = rss.sample();
    const hash = createHash("sha256");
    let bytes = 0;
    const started = performance.now();
    if (mode === "write") {
      // Fresh random pieces, made as they are consumed: the whole file never exists in memory.
      async function* pieces(): AsyncGenerator<Uint8Array> {
        for (let offset = 0; offset < size; offset += PIECE) {
          const piece = randomFillSync(new Uint8Array(Math.min(PIECE, size - offset)));
          hash.update(piece);
          bytes += piece.byteLength;
          rss.sample();
          yield piece;
        }
      }
      await lease.transact((tx) =>
        tx.workspace.apply({ put: { [PATH]: pieces() } }, { event: { kind: "large.written" } }),
      );
    } else {
      await lease.read(async (r) => {
        for await (const piece of r.workspace.stream(PATH)) {
          hash.update(piece);
          bytes += piece.byteLength;
          rss.sample();
        }
      });
    }
    const ms = performance.now() - started;
    const rssPeak = rss.stop();
    await lease.release();
    collectGarbage();
    return {
      adapter,
      mode,
      bytes,
      sha256: hash.digest("hex"),
      ms,
      rssBaseline,
      rssPeak,
      heapAfter: process.memoryUsage().heapUsed,
    };
  } finally {
    await store.close();
  }
}

export const largeFileSuite: Suite = {
  name: "large-file",
  summary: "peak RSS writing (streamed) and reading back (streamed) a 100 MiB file",
  async run(context) {
    const size = (context.quick ? 20 : 100) * PIECE;
    const rows: string[][] = [];
    const cases: Figures[] = [];
    for (const adapter of Object.keys(DRIVERS)) {
      const file = context.freshFile();
      const args = (mode: string) => [adapter, mode, file, String(size)];
      const written = await runChild<Figures>(import.meta.url, args("write"));
      const fileBytes = await databaseSize(file);
      const read = await runChild<Figures>(import.meta.url, args("read"));
      if (read.bytes !== size || read.sha256 !== written.sha256) {
        throw new Error(`${adapter}: read back ${read.bytes} bytes ${read.sha256}, wrote ${size}`);
      }
      for (const figures of [written, read]) {
        cases.push(figures);
        const growth = mib(figures.rssPeak - figures.rssBaseline);
        rows.push([
          `${adapter} ${figures.mode}`,
          formatMib(figures.rssBaseline),
          formatMib(figures.rssPeak),
          `+${growth.toFixed(1)}`,
          `≤ +${GOAL_MIB} ${growth <= GOAL_MIB ? "met" : "MISSED"}`,
          (mib(size) / (figures.ms / 1000)).toFixed(0),
          figures.mode === "write" ? formatMib(fileBytes) : "",
        ]);
      }
    }
    return {
      notes: [
        "durability: WAL, synchronous=NORMAL (runledger's default)",
        `file: ${mib(size)} MiB of random bytes, written as an AsyncIterable of 1 MiB pieces in one apply (one transaction), read back with r.workspace.stream inside lease.read; SHA-256 compared`,
        "each case is a process of its own; baseline = RSS after store.open and a collection, before the first byte; peak sampled every 10 ms and at every piece",
      ],
      tables: [
        {
          title: `one ${mib(size)} MiB file, streamed (RSS in MiB)`,
          headers: ["case", "RSS base", "peak RSS", "growth", "goal", "MiB/s", "db size"],
          rows,
        },
      ],
      data: { size, cases },
    };
  },
};

if (isChildEntry(import.meta.url)) {
  const [adapter, mode, file, size] = process.argv.slice(2);
  reportToParent(
    await child(adapter as string, mode as "write" | "read", file as string, Number(size)),
  );
}
