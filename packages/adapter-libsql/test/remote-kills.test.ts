/**
 * Exactly once across a server that dies: 4 writers step one run on sqld
 * while the server is killed (SIGKILL) and restarted at random moments, at
 * least 50 times over ws and 50 over http. Every writer lands each step with
 * `lease.transact(fn, { key })` and retries it, on the same lease, after any
 * failure the server causes — `commit_unknown` when the connection went
 * during the COMMIT — until it lands or answers `already_landed`. Afterwards
 * every step is in the journal exactly once, the journal is gap-free and the
 * run verifies. The long form of this campaign is the same file with more
 * kills: `RUNLEDGER_KILLS=500 npx vitest run test/remote-kills.test.ts` in
 * packages/adapter-libsql (docs/remote.md has its figures).
 */
import { libsqlDriver } from "@runledger/adapter-libsql";
import { resolveLocalhostSubdomains, startSqld } from "@runledger/conformance/sqld";
import { isRunledgerError, type RunLease, RunStore } from "@runledger/core";
import { afterAll, describe, expect, it } from "vitest";

const WRITERS = 4;
/** Kills a protocol: 50 in `npm test`; RUNLEDGER_KILLS for the long form. */
const KILLS = Number(process.env.RUNLEDGER_KILLS ?? 50);
/** A writer that cannot land a step for this long fails the test (the server is down ~1 s a kill at most). */
const STUCK_MS = 120_000;

/** What the server's death may answer; anything else fails the writer. */
const RETRIED = new Set([
  "commit_unknown",
  "connection_lost",
  "server_unreachable",
  "transaction_timeout",
  "stream_expired",
  "busy",
]);

/** A small deterministic generator (mulberry32), so a failing campaign can be replayed. */
function random(seed: number): () => number {
  let state = seed >>> 0;
  return () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4_294_967_296;
  };
}

const pause = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

interface Tally {
  /** Failures retried, by code. */
  readonly retried: Record<string, number>;
  /** Retries that found their step landed already. */
  alreadyLanded: number;
}

/** Lands one step by key on `lease`, retrying whatever the server's death answers. */
async function landStep(lease: RunLease, writer: number, step: number, tally: Tally) {
  const started = Date.now();
  for (;;) {
    try {
      await lease.transact((tx) => tx.journal.append({ writer, step }), {
        key: `w${writer}-s${step}`,
      });
      return;
    } catch (error) {
      if (isRunledgerError(error, "already_landed")) {
        tally.alreadyLanded += 1;
        return;
      }
      if (!isRunledgerError(error) || !RETRIED.has(error.code)) throw error;
      tally.retried[error.code] = (tally.retried[error.code] ?? 0) + 1;
      if (Date.now() - started > STUCK_MS) {
        throw new Error(`writer ${writer} could not land step ${step} for ${STUCK_MS} ms`, {
          cause: error,
        });
      }
      await pause(20);
    }
  }
}

resolveLocalhostSubdomains();
const server = await startSqld({ namespaces: true });
afterAll(() => server.stop());

describe("remote libSQL: exactly once while the server is killed", () => {
  for (const [index, protocol] of (["ws", "http"] as const).entries()) {
    it(`over ${protocol}: ${WRITERS} writers retrying by key through ${KILLS} kills of sqld: every step once, the journal gap-free, the run verified`, async () => {
      const url = server.namespaceUrl(`kills-${protocol}`, protocol);
      const admin = new RunStore({ driver: libsqlDriver({ adminUrl: server.adminUrl as string }) });
      const stores = Array.from(
        { length: WRITERS },
        () => new RunStore({ driver: libsqlDriver() }),
      );
      const tally: Tally = { retried: {}, alreadyLanded: 0 };
      try {
        await (
          await admin.open(url, { create: { workflowId: "kills", runId: protocol } })
        ).release();
        const leases = await Promise.all(stores.map((store) => store.open(url)));
        let killing = true;
        const steps = Array.from({ length: WRITERS }, () => 0);
        const writers = Promise.all(
          leases.map(async (lease, writer) => {
            while (killing) {
              await landStep(lease, writer, steps[writer]!, tally);
              steps[writer]! += 1;
            }
          }),
        );
        // A writer that fails ends the campaign at once (and its failure is the test's).
        writers.catch(() => {
          killing = false;
        });
        const next = random(0x5eed + index);
        for (let kill = 0; kill < KILLS && killing; kill++) {
          await pause(20 + Math.floor(next() * 200));
          await server.restart();
        }
        killing = false;
        await writers;

        const journal = await leases[0]!.read((r) => r.journal.list({ limit: 100_000 }));
        expect(journal.map((event) => event.sequence)).toStrictEqual(journal.map((_, i) => i + 1));
        const seen = new Map<string, number>();
        for (const { record } of journal) {
          const name = `${String(record.writer)}:${String(record.step)}`;
          seen.set(name, (seen.get(name) ?? 0) + 1);
        }
        const twice = [...seen].filter(([, count]) => count > 1);
        expect(twice).toStrictEqual([]);
        const landed = steps.reduce((sum, n) => sum + n, 0);
        expect(journal).toHaveLength(landed);
        for (const [writer, count] of steps.entries()) {
          for (let step = 0; step < count; step++) expect(seen.get(`${writer}:${step}`)).toBe(1);
        }
        expect((await leases[0]!.verify()).problems).toStrictEqual([]);
        // The campaign met what it is for: failures at COMMIT among others, healed by the same leases.
        expect(Object.values(tally.retried).reduce((sum, n) => sum + n, 0)).toBeGreaterThan(0);
        console.info(
          `${protocol}: ${KILLS} kills, ${landed} steps landed once each; retried ${JSON.stringify(tally.retried)}; ` +
            `${tally.alreadyLanded} retries found their step landed`,
        );
        for (const lease of leases) await lease.release();
      } finally {
        for (const store of stores) await store.close();
        await admin.close();
      }
    }, 600_000);
  }
});
