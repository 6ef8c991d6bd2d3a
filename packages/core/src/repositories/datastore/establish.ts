/**
 * Establishing a datastore, in the entry's first turn:
 * 1. recognize the file against the frozen manifest, reading only;
 * 2. if fresh and the caller asked to create: create version 1 in one
 *    BEGIN IMMEDIATE (freshness re-checked under the lock), with its
 *    identity row and, for `{ format: 3 }`, the format-3 marker;
 * 3. check the identity row and read the format marker — a missing marker
 *    is format 2, a newer or garbled one is refused;
 * 4. only then switch to WAL and set durability.
 * Every refusal happens before step 4, so a refused file is left exactly
 * as found.
 */
import type { EstablishContext } from "../../connection/provider-options.js";
import { RunledgerError } from "../../port/errors.js";
import type { DatastoreFormat } from "../../routing/hook.js";
import { createSchema } from "../../schema/create.js";
import { asDamage, describeFresh, recognize } from "../../schema/recognize.js";
import { formatOf, markerFor, serializeMarker } from "./marker.js";
import { DATASTORE_SCHEMA_V1 } from "./schema-v1.js";

export interface DatastoreCreate {
  readonly format: DatastoreFormat;
  readonly id: string;
  readonly now: number;
}

export function establishDatastore() {
  return async (context: EstablishContext<DatastoreCreate>): Promise<void> => {
    const { connection, location, create, read, transact, configure } = context;
    const manifest = DATASTORE_SCHEMA_V1;
    const recognition = await read((reader) => recognize(reader, manifest, location));
    if (recognition.kind === "fresh") {
      if (create === undefined) {
        throw new RunledgerError(
          "not_found",
          `no datastore at ${location}: ${describeFresh(recognition)}; pass { create: true } to create one`,
        );
      }
      await transact(async (tx) => {
        if ((await recognize(tx, manifest, location)).kind !== "fresh") return;
        await tx.savepoint((sp) =>
          createSchema(
            sp,
            manifest,
            async () => {
              await sp.execute(
                "INSERT INTO datastore_info (singleton, datastore_id, created_at) VALUES (1, ?, ?)",
                [create.id, create.now],
              );
              if (create.format === 3) {
                await sp.execute("INSERT INTO format_marker (singleton, marker) VALUES (1, ?)", [
                  serializeMarker(markerFor(3)),
                ]);
              }
            },
            { remote: connection.remote === true },
          ),
        );
      });
    }
    await read(async (reader) => {
      let rows: number;
      let marker: string | undefined;
      try {
        rows = (await reader.execute("SELECT datastore_id FROM datastore_info")).rows.length;
        const stored = (await reader.execute("SELECT marker FROM format_marker")).rows[0];
        marker = stored === undefined ? undefined : String(stored.marker);
      } catch (error) {
        throw asDamage(error, manifest, location);
      }
      if (rows !== 1) {
        throw new RunledgerError(
          "corrupt",
          `cannot open ${location} as a ${manifest.title}: its datastore_info row is ` +
            `${rows === 0 ? "missing" : "duplicated"}; restore it from a copy`,
        );
      }
      formatOf(marker, location);
    });
    await configure(recognition);
  };
}
