/**
 * A second process that runs the routing scenario through core's
 * repositories on a new format-3 datastore with its own driver — another
 * adapter's, for the cross-adapter proof that a datastore and commit log
 * written by one adapter are caught up by the other (two SQLite libraries
 * never share a file inside one process). It reports one JSON line and exits.
 *
 * Usage: node routing-peer.js '<RoutingPeerRequest as JSON>'
 */
import { CommitLogStore } from "@runledger/core/commit-log";
import { bindUnit, DatastoreStore } from "@runledger/core/datastore";
import { MemoryVault, RouteRecorder, runScenario } from "../families/routing-scenario.js";
import { loadDriver, readRequest, runChild, send } from "./common.js";
import type { RoutingPeerReport, RoutingPeerRequest } from "./routing-peer-protocol.js";

/** Never outlive a forgotten test run. */
const LIFETIME_MS = 120_000;

async function main(): Promise<void> {
  const request = readRequest<RoutingPeerRequest>();
  const driver = await loadDriver(request);
  const datastores = new DatastoreStore({ driver });
  const logs = new CommitLogStore({ driver });
  try {
    const recorder = new RouteRecorder();
    const datastore = await datastores.open(request.datastore, {
      create: { format: 3 },
      observer: recorder,
      ...(request.namespace === undefined ? {} : { namespace: request.namespace }),
    });
    const log = await logs.open(request.log, { create: true });
    const unit = await log.begin();
    const unbind = bindUnit(datastore.hook, unit);
    try {
      await runScenario(datastore, { vault: new MemoryVault() });
    } finally {
      unbind();
    }
    const result = await unit.commit();
    const documents = (await datastore.documents()).length;
    await datastore.release();
    await log.release();
    await send<RoutingPeerReport>({
      state: "done",
      driver: driver.name,
      logId: log.logId,
      result,
      intents: [...recorder.lastIntents()],
      documents,
    });
  } finally {
    await datastores.close();
    await logs.close();
  }
}

runChild(main, { lifetimeMs: LIFETIME_MS });
