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
import { isAbsolute } from "node:path";
import { pathToFileURL } from "node:url";
import {
  type CatalogRow,
  CommitLogStore,
  type CommitResult,
  checkChange,
  type Driver,
  put,
  ReadModelStore,
  tombstone,
} from "@runledger/core";
import type { DocumentDigest, LogPeerReport, LogPeerRequest } from "./commit-log-peer-protocol.js";

/** Never outlive a forgotten test run. */
const LIFETIME_MS = 120_000;

function send(report: LogPeerReport): Promise<void> {
  return new Promise((resolve) =>
    process.stdout.write(`${JSON.stringify(report)}\n`, () => resolve()),
  );
}

async function loadDriver(request: LogPeerRequest): Promise<Driver> {
  const specifier = isAbsolute(request.module)
    ? pathToFileURL(request.module).href
    : request.module;
  const exports = (await import(specifier)) as Record<string, unknown>;
  const factory = exports[request.exportName];
  if (typeof factory !== "function") {
    throw new Error(`${request.module} has no function export named ${request.exportName}`);
  }
  return (factory as () => Driver)();
}

async function main(): Promise<void> {
  const request = JSON.parse(process.argv[2] ?? "") as LogPeerRequest;
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
    await send({ state: "done", driver: driver.name, logId: log.logId, results, model });
  } finally {
    await logs.close();
    await models.close();
  }
}

setTimeout(() => process.exit(3), LIFETIME_MS).unref();

main().then(
  () => process.exit(0),
  async (error: unknown) => {
    const code = (error as { code?: unknown } | null)?.code;
    await send({
      state: "failed",
      ...(typeof code === "string" ? { code } : {}),
      message: error instanceof Error ? (error.stack ?? error.message) : String(error),
    });
    process.exit(1);
  },
);
