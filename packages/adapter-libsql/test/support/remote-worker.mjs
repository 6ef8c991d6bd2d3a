// One worker process of the many-workers test (remote-workers.test.ts): it
// writes `steps` workspace steps (an apply with its journal event) on one
// remote run, each in its own transaction (optimistic when its fifth argument
// says "optimistic"), and prints one line per step the store acknowledged:
// {"worker","step","sequence","calls"} (calls: how many times the step's
// callback ran in the attempt that landed; a transaction_timeout, which lands
// nothing, is retried up to 5 attempts). A failure is printed as {"failed": code} and ends the
// process with code 1.
import { libsqlDriver } from "@runledger/adapter-libsql";
import { resolveLocalhostSubdomains } from "@runledger/conformance/sqld";
import { RunStore } from "@runledger/core";

// The test's server addresses the run as a namespace, NAME.localhost.
resolveLocalhostSubdomains();

const [url, worker, steps] = [process.argv[2], Number(process.argv[3]), Number(process.argv[4])];
const optimistic = process.argv[5] === "optimistic";
const store = new RunStore({ driver: libsqlDriver(), busyTimeoutMs: 60_000 });
try {
  const lease = await store.open(url, { create: { workflowId: "workers", runId: "shared" } });
  for (let step = 0; step < steps; step++) {
    let calls = 0;
    let sequence;
    for (let attempt = 1; sequence === undefined; attempt++) {
      calls = 0;
      try {
        ({ sequence } = await lease.transact(
          (tx) => {
            calls += 1;
            return tx.workspace.apply(
              { put: { [`worker-${worker}/step-${step}.txt`]: `worker ${worker} step ${step}` } },
              { event: { worker, step } },
            );
          },
          { optimistic },
        ));
      } catch (error) {
        // A transaction the server took the lock from (a process starved for 5 s on a loaded
        // machine) committed nothing, and says to retry it: an engine would.
        if (error?.code !== "transaction_timeout" || attempt === 5) throw error;
      }
    }
    process.stdout.write(`${JSON.stringify({ worker, step, sequence, calls })}\n`);
  }
  await store.close();
} catch (error) {
  process.stdout.write(
    `${JSON.stringify({ failed: error?.code ?? String(error), message: String(error?.message) })}\n`,
  );
  await store.close().catch(() => {});
  process.exit(1);
}
