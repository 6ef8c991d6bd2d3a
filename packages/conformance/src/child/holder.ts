/**
 * A second process that holds a write lock on a database: it builds the
 * subject's driver, opens the file, runs BEGIN IMMEDIATE (plus the statements
 * it was given) and keeps that transaction open until the suite writes
 * "commit" or "rollback" on its stdin. If stdin closes first (the suite went
 * away) it rolls back, so a crashed test never leaves a lock behind.
 *
 * Usage: node holder.js '<HolderRequest as JSON>'
 */
import type { DriverTransaction } from "@runledger/core/port";
import { loadDriver, messageOf, nextCommand, readRequest, runChild, send } from "./common.js";
import type { HolderCommand, HolderMessage, HolderRequest } from "./protocol.js";

/** Never outlive a forgotten test run. */
const LIFETIME_MS = 120_000;

async function finish(transaction: DriverTransaction, command: HolderCommand): Promise<void> {
  if (command === "commit") await transaction.commit();
  else await transaction.rollback();
}

async function main(): Promise<void> {
  const request = readRequest<HolderRequest>();
  const driver = await loadDriver(request);
  const connection = await driver.open(request.location, {
    create: false,
    readOnly: false,
    busyTimeoutMs: 5_000,
  });
  try {
    const transaction = await connection.begin("immediate");
    for (const sql of request.statements) await transaction.execute(sql);
    await send<HolderMessage>({ state: "holding" });

    const command = (await nextCommand<HolderCommand>(["commit", "rollback"])) ?? "rollback";
    await finish(transaction, command);
  } finally {
    await connection.close();
  }
  await send<HolderMessage>({ state: "released" });
}

runChild(main, { lifetimeMs: LIFETIME_MS, describe: messageOf });
