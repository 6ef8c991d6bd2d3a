/**
 * The run catalog's frozen format as docs/file-format.md states it: its
 * digest, application id and identity table, held to the code.
 */
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";
import {
  CATALOG_APPLICATION_ID,
  CATALOG_SCHEMA_V1,
  CATALOG_SCHEMA_V1_DIGEST,
} from "../src/run/catalog/schema-v1.js";

const repo = fileURLToPath(new URL("../../../", import.meta.url));

describe("the run catalog's docs stay true to the code", () => {
  it("docs/file-format.md states the catalog's digest, application id and identity table", () => {
    const format = readFileSync(join(repo, "docs/file-format.md"), "utf8");
    expect(format).toContain(`CATALOG_SCHEMA_V1_DIGEST = ${CATALOG_SCHEMA_V1_DIGEST}`);
    expect(format).toContain(`0x${CATALOG_APPLICATION_ID.toString(16).toUpperCase()}`);
    expect(CATALOG_SCHEMA_V1.identity).toBe("runledger_catalog");
    for (const object of CATALOG_SCHEMA_V1.objects) expect(format).toContain(`\`${object.name}\``);
  });
});
