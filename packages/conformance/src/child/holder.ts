/**
 * A second process that holds a write lock on a database: it builds the
 * subject's driver, opens the file, runs BEGIN IMMEDIATE (plus the statements
 * it was given) and keeps that transaction open until the suite writes
 * "commit" or "rollback" on its stdin. If stdin closes first (the suite went
 * away) it rolls back, so a crashed test never leaves a lock behind.
 *
 * Usage: node holder.js '<HolderRequest as JSON>'
 */
import { isAbsolute } from "node:path";
import { createInterface } from "node:readline";
import { pathToFileURL } from "node:url";
import type { Driver, DriverTransaction } from "@runledger/core";
import type { HolderCommand, HolderMessage, HolderRequest } from "./protocol.js";

/** Never outlive a forgotten test run. */
const LIFETIME_MS = 120_000;

function send(message: HolderMessage): Promise<void> {
  return new Promise((resolve) =>
    process.stdout.write(`${JSON.stringify(message)}\n`, () => resolve()),
  );
}

async function loadDriver(request: HolderRequest): Promise<Driver> {
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

async function finish(transaction: DriverTransaction, command: HolderCommand): Promise<void> {
  if (command === "commit") await transaction.commit();
  else await transaction.rollback();
}

async function main(): Promise<void> {
  const request = JSON.parse(process.argv[2] ?? "") as HolderRequest;
  const driver = await loadDriver(request);
  const connection = await driver.open(request.location, {
    create: false,
    readOnly: false,
    busyTimeoutMs: 5_000,
  });
  try {
    const transaction = await connection.begin("immediate");
    for (const sql of request.statements) await transaction.execute(sql);
    await send({ state: "holding" });

    let command: HolderCommand = "rollback";
    for await (const line of createInterface({ input: process.stdin })) {
      const word = line.trim();
      if (word === "commit" || word === "rollback") {
        command = word;
        break;
      }
    }
    await finish(transaction, command);
  } finally {
    await connection.close();
  }
  await send({ state: "released" });
}

setTimeout(() => process.exit(3), LIFETIME_MS).unref();

main().then(
  () => process.exit(0),
  async (error: unknown) => {
    const code = (error as { code?: unknown } | null)?.code;
    await send({
      state: "failed",
      ...(typeof code === "string" ? { code } : {}),
      message: error instanceof Error ? error.message : String(error),
    });
    process.exit(1);
  },
);
