/**
 * Every database format of this build can be created where the header
 * cannot be written (a libSQL server refuses PRAGMA application_id): each
 * manifest names an identity table, one of its own tables and no other
 * format's. A manifest without one is refused there (`remote_unsupported`)
 * before a statement is sent.
 */
import { describe, expect, it } from "vitest";
import { COMMIT_LOG_SCHEMA_V1 } from "../src/commit-log/schema-v1.js";
import type { Executor } from "../src/port/driver.js";
import { RunledgerError } from "../src/port/errors.js";
import { DATASTORE_SCHEMA_V1 } from "../src/repositories/datastore/schema-v1.js";
import { createSchema } from "../src/schema/create.js";
import { MANIFESTS as BY_NAME } from "./manifests.js";

const MANIFESTS = Object.values(BY_NAME);

function recorder(): { executor: Executor; statements: string[] } {
  const statements: string[] = [];
  const executor = {
    async execute(sql: string) {
      statements.push(sql);
      return { rows: [], changes: 0, lastInsertRowid: undefined };
    },
  } as unknown as Executor;
  return { executor, statements };
}

describe("identity tables", () => {
  it("every format names an identity table that is one of its own tables and no other format's", () => {
    const identities = MANIFESTS.map((manifest) => {
      const table = manifest.objects.find((object) => object.name === manifest.identity);
      expect(table?.type, manifest.title).toBe("table");
      for (const other of MANIFESTS) {
        if (other === manifest) continue;
        expect(
          other.objects.some((object) => object.name === manifest.identity),
          `${other.title} holds ${manifest.identity}`,
        ).toBe(false);
      }
      return manifest.identity;
    });
    expect(new Set(identities).size).toBe(MANIFESTS.length);
  });

  it("creates a format on a server without the header id: its objects, then user_version", async () => {
    const { executor, statements } = recorder();
    await createSchema(executor, COMMIT_LOG_SCHEMA_V1, async () => {}, { remote: true });
    expect(statements.some((sql) => sql.startsWith("PRAGMA application_id"))).toBe(false);
    expect(statements.at(-1)).toBe("PRAGMA user_version = 1");
    expect(statements.length).toBe(
      COMMIT_LOG_SCHEMA_V1.objects.filter((object) => object.sql !== null).length + 1,
    );
  });

  it("refuses, before any statement, to create on a server a format that has no identity table", async () => {
    const { executor, statements } = recorder();
    const { identity: _none, ...headerOnly } = DATASTORE_SCHEMA_V1;
    const refusal = await createSchema(executor, headerOnly, async () => {}, {
      remote: true,
    }).catch((error: unknown) => error);
    expect(refusal).toBeInstanceOf(RunledgerError);
    expect((refusal as RunledgerError).code).toBe("remote_unsupported");
    expect(statements).toStrictEqual([]);
  });
});
