/**
 * The establish steps of the commit log and the read model, run in the
 * entry's first turn, exactly as the run database's (../run/establish.ts):
 * 1. recognize the file, reading only (a refusal leaves it as found);
 * 2. if it is fresh and the caller asked to create: create version 1 inside
 *    one BEGIN IMMEDIATE (freshness re-checked under the lock, so two
 *    processes creating it at once make one), with its one header row
 *    (`log_info`, or the read model's cursor);
 * 3. check that header row;
 * 4. only then switch to WAL and set durability.
 */
import type { Executor } from "../port/driver.js";
import { RunledgerError } from "../port/errors.js";
import { createSchema } from "../schema/create.js";
import type { SchemaManifest } from "../schema/manifest.js";
import { asDamage, describeFresh, recognize } from "../schema/recognize.js";
import type { EstablishSteps, LogContext } from "./context.js";
import { READ_MODEL_SCHEMA_V1 } from "./read-model-schema-v1.js";
import { COMMIT_LOG_SCHEMA_V1 } from "./schema-v1.js";

export function establishCommitLog(context: LogContext): EstablishSteps {
  return establishSingletonDatabase(COMMIT_LOG_SCHEMA_V1, {
    populate: (tx) =>
      tx
        .execute("INSERT INTO log_info (singleton, log_id, created_at) VALUES (1, ?, ?)", [
          context.newId(),
          context.clock(),
        ])
        .then(() => undefined),
    singleton: "SELECT log_id FROM log_info",
    what: "its log_info row",
  });
}

export interface SingletonDatabase {
  /** Writes the rows a fresh database starts with, inside the creating transaction. */
  readonly populate: (tx: Executor) => Promise<void>;
  /** A query that returns exactly one row in a sound database. */
  readonly singleton: string;
  /** The row's name in messages. */
  readonly what: string;
}

/** recognize → create if asked → check the singleton row → configure, for any one-row-headed manifest. */
export function establishSingletonDatabase(
  manifest: SchemaManifest,
  database: SingletonDatabase,
): EstablishSteps {
  return async ({ connection, location, create, read, transact, configure }) => {
    const found = await read((reader) => recognize(reader, manifest, location));
    if (found.kind === "fresh") {
      if (create === undefined) {
        throw new RunledgerError(
          "not_found",
          `no ${manifest.title} at ${location}: ${describeFresh(found)}; pass { create: true } to create one`,
        );
      }
      await transact(async (tx) => {
        const again = await recognize(tx, manifest, location);
        if (again.kind === "fresh") {
          await tx.savepoint((sp) =>
            createSchema(sp, manifest, () => database.populate(sp), {
              remote: connection?.remote === true,
            }),
          );
        }
      });
    }
    await read(async (reader) => {
      let count: number;
      try {
        count = (await reader.execute(database.singleton)).rows.length;
      } catch (error) {
        throw asDamage(error, manifest, location);
      }
      if (count !== 1) {
        throw new RunledgerError(
          "corrupt",
          `cannot open ${location} as a ${manifest.title}: ${database.what} is ` +
            `${count === 0 ? "missing" : "duplicated"}; restore it from a copy`,
        );
      }
    });
    await configure(found);
  };
}

export function establishReadModel(): EstablishSteps {
  return establishSingletonDatabase(READ_MODEL_SCHEMA_V1, {
    populate: (tx) =>
      tx
        .execute(
          "INSERT INTO read_model_cursor (singleton, log_id, applied_commit) VALUES (1, NULL, 0)",
        )
        .then(() => undefined),
    singleton: "SELECT applied_commit FROM read_model_cursor",
    what: "its cursor row",
  });
}
