import { createRequire } from "node:module";
import { libsqlDriver } from "@runledger/adapter-libsql";
import { resolveLocalhostSubdomains, startSqld } from "@runledger/conformance/sqld";
import { RunStore } from "@runledger/core";

resolveLocalhostSubdomains();
const server = await startSqld({ namespaces: true });
const where = process.argv[2] ?? "ws";
const log = [];
const realFetch = globalThis.fetch;
globalThis.fetch = async (input, init) => {
  if (globalThis.__rt) {
    const body = init?.body ?? (input instanceof Request ? await input.clone().text() : "");
    console.log("FETCH", String(typeof body === "string" ? body : "[stream]").slice(0, 400));
  }
  return realFetch(input, init);
};
// wrap hrana stream requests at the client level: patch Transaction prototype methods
const client = await import("@libsql/client");
const { HranaTransaction } = await import("@libsql/client/lib-esm/hrana.js").catch(() => ({}));
try {
  const driver = libsqlDriver({ adminUrl: server.adminUrl });
  const store = new RunStore({ driver });
  const lease = await store.open(server.namespaceUrl("rt1", where), {
    create: { workflowId: "w", runId: "r" },
  });
  for (let i = 0; i < 3; i++)
    await lease.transact((tx) =>
      tx.workspace.apply({ put: { [`steps/${i}.json`]: `{"step":${i}}` } }, { event: { step: i } }),
    );
  globalThis.__rt = true;
  await lease.transact((tx) =>
    tx.workspace.apply({ put: { "steps/9.json": `{"step":9}` } }, { event: { step: 9 } }),
  );
  globalThis.__rt = false;
  await lease.transact((tx) => tx.journal.append({ a: 1 }));
  await store.close();
} finally {
  await server.stop();
}
