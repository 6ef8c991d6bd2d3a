/**
 * Datastore recognition (docs/routing.md): a fresh datastore holds
 * exactly its frozen manifest, and every file it refuses — garbage, another
 * program's database, a creation that never finished, a missing file — is
 * refused with its own code and left byte-for-byte as found.
 */
import { readFile, writeFile } from "node:fs/promises";
import { join } from "node:path";
import {
  DATASTORE_APPLICATION_ID,
  DATASTORE_SCHEMA_V1_DIGEST,
  DATASTORE_SCHEMA_VERSION,
} from "@runledger/core/datastore";
import { expect, it } from "vitest";
import { type Fixtures, failureOf } from "../fixtures.js";
import { datastoreStore } from "./routing-fixtures.js";
import { fingerprint, liveSchema, noise, schemaDigest } from "./run-fixtures.js";

export function describeDatastoreFiles(fx: Fixtures): void {
  fx.needs("files").describe("datastore files", () => {
    /** A location alone in its own directory, so its listing is its own. */
    const lonely = async () => join(await fx.scratchDirectory(), "datastore.sqlite");

    fx.needs("walSharedMemory").it("a fresh datastore holds exactly its manifest", async () => {
      const location = await lonely();
      const handle = await datastoreStore(fx).open(location, { create: true });
      expect(handle).toBeDefined();
      const live = await liveSchema(fx, location);
      expect(live.applicationId).toBe(DATASTORE_APPLICATION_ID);
      expect(live.userVersion).toBe(DATASTORE_SCHEMA_VERSION);
      expect(schemaDigest(live)).toBe(DATASTORE_SCHEMA_V1_DIGEST);
    });

    const refusals: [string, string, (location: string) => Promise<void>][] = [
      ["random bytes", "not_a_database", (at) => writeFile(at, noise("datastore", 8192))],
      [
        "another program's database",
        "foreign_database",
        async (at) => {
          const made = await fx.database("CREATE TABLE notes (body TEXT)");
          await writeFile(at, await readFile(made));
        },
      ],
      [
        "our application id with user_version 0",
        "partial_initialization",
        async (at) => {
          const connection = await fx.open(at);
          await connection.executeScript(
            `PRAGMA application_id = ${DATASTORE_APPLICATION_ID}; CREATE TABLE half (x)`,
          );
          await connection.close();
        },
      ],
    ];
    for (const [what, code, make] of refusals) {
      it(`refuses ${what} with ${code} and leaves it unchanged`, async () => {
        const location = await lonely();
        await make(location);
        const before = await fingerprint(location);
        for (const create of [false, true]) {
          const error = await failureOf(() => datastoreStore(fx).open(location, { create }));
          expect(error.code).toBe(code);
          expect(await fingerprint(location)).toEqual(before);
        }
      });
    }

    it("refuses a missing datastore without create as not_found and creates nothing", async () => {
      const location = await lonely();
      const before = await fingerprint(location);
      expect((await failureOf(() => datastoreStore(fx).open(location))).code).toBe("not_found");
      expect(await fingerprint(location)).toEqual(before);
    });
  });
}
