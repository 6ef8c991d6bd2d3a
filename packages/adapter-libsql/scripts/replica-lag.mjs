// How long a step written on a primary sqld takes to be read on a replica sqld
// (--primary-grpc-url), after a build: node scripts/replica-lag.mjs [steps].
// Prints the median and the max in ms. (An embedded replica has no lag to
// measure this way: its file syncs as a run opens and after its own writes.)
import { libsqlDriver } from "@runledger/adapter-libsql";
import { startSqld } from "@runledger/conformance/sqld";
import { RunStore } from "@runledger/core";

const steps = Number(process.argv[2] ?? 50);
const primary = await startSqld({ primary: true });
const replica = await startSqld({ replicaOf: primary.grpcUrl });
const store = new RunStore({ driver: libsqlDriver() });
const summary = (lags) => {
  const sorted = [...lags].sort((a, b) => a - b);
  return { median: sorted[Math.floor(sorted.length / 2)], max: sorted.at(-1) };
};
try {
  const onPrimary = await store.open(primary.url("ws"), {
    create: { workflowId: "lag", runId: "lag" },
  });
  const onReplica = await store.open(replica.url("ws"));
  const server = [];
  for (let i = 1; i <= steps; i++) {
    const { sequence } = await onPrimary.transact((tx) => tx.journal.append({ i }));
    const started = performance.now();
    let seen;
    while (seen === undefined) {
      const now = performance.now() - started;
      if (now > 60_000) throw new Error(`step ${i} not replicated in 60 s`);
      const events = await onReplica.read((r) => r.journal.list({ after: sequence - 1 }));
      if (events.length > 0) seen = performance.now() - started;
      await new Promise((resolve) => setTimeout(resolve, 2));
    }
    server.push(seen);
  }
  const round = (v) => +v.toFixed(1);
  const out = (lags) =>
    Object.fromEntries(Object.entries(summary(lags)).map(([k, v]) => [k, round(v)]));
  console.log(JSON.stringify({ steps, replicaServerMs: out(server) }));
} finally {
  await store.close();
  await replica.stop();
  await primary.stop();
}
