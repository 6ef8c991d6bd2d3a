/**
 * A second process that writes a commit log, or catches a read model up from
 * one, through core with its own driver — another adapter's, for the
 * cross-adapter proof that a log written by one adapter is read by the other
 * (two SQLite libraries never share a file inside one process). It reports
 * one JSON line and exits.
 *
 * Usage: node commit-log-peer.js '<LogPeerRequest as JSON>'
 */
import { createHash } from "node:crypto";
import {
  type CatalogRow,
  CommitLogStore,
  type CommitResult,
  checkChange,
  put,
  ReadModelStore,
  tombstone,
} from "@runledger/core/commit-log";
import type { DocumentDigest, LogPeerReport, LogPeerRequest } from "./commit-log-peer-protocol.js";
import { loadDriver, readRequest, runChild, send } from "./common.js";

/** Never outlive a forgotten test run. */
const LIFETIME_MS = 120_000;

async function main(): Promise<void> {
  const request = readRequest<LogPeerRequest>();
  const driver = await loadDriver(request);
  const logs = new CommitLogStore({ driver });
  const models = new ReadModelStore({ driver });
  try {
    const log = await logs.open(request.log, { create: request.write !== undefined });
    const results: CommitResult[] = [];
    for (const unitSpec of request.write ?? []) {
      const unit = await log.begin();
      for (const change of unitSpec) {
        await unit.stage(
          checkChange({
            intent: change.intent,
            partition: change.partition,
            ops: change.ops.map((op) => {
              const options = op.expect === undefined ? {} : { expect: op.expect };
              return op.op === "put"
                ? put(op.key, op.text ?? "", options)
                : tombstone(op.key, options);
            }),
          }),
        );
      }
      results.push(await unit.commit());
    }
    let model: Extract<LogPeerReport, { state: "done" }>["model"] = null;
    if (request.readModel !== undefined) {
      const readModel = await models.open(request.readModel, { create: true });
      await readModel.catchUp(log);
      model = await readModel.read(async (reader) => {
        const catalog: CatalogRow[] = [];
        for await (const row of reader.catalog()) catalog.push(row);
        const documents: DocumentDigest[] = [];
        for await (const { partition, key, data } of reader.documents()) {
          documents.push({
            partition,
            key,
            sha256: createHash("sha256").update(data).digest("hex"),
            size: data.byteLength,
          });
        }
        return { appliedCommit: (await reader.cursor()).appliedCommit, catalog, documents };
      });
      await readModel.release();
    }
    await log.release();
    await send<LogPeerReport>({
      state: "done",
      driver: driver.name,
      logId: log.logId,
      results,
      model,
    });
  } finally {
    await logs.close();
    await models.close();
  }
}

runChild(main, { lifetimeMs: LIFETIME_MS });
