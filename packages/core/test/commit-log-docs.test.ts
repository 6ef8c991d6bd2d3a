import { readFileSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";
import {
  COMMIT_LOG_APPLICATION_ID,
  COMMIT_LOG_SCHEMA_V1_DIGEST,
  READ_MODEL_APPLICATION_ID,
  READ_MODEL_SCHEMA_V1_DIGEST,
} from "../src/commit-log.js";

const repo = fileURLToPath(new URL("../../../", import.meta.url));
const read = (path: string) => readFileSync(join(repo, path), "utf8");

describe("commit-log docs stay true to the code", () => {
  it("docs/file-format.md states the commit log's and read model's digests and application ids", () => {
    const format = read("docs/file-format.md");
    expect(format).toContain(`COMMIT_LOG_SCHEMA_V1_DIGEST = ${COMMIT_LOG_SCHEMA_V1_DIGEST}`);
    expect(format).toContain(`READ_MODEL_SCHEMA_V1_DIGEST = ${READ_MODEL_SCHEMA_V1_DIGEST}`);
    expect(format).toContain(`0x${COMMIT_LOG_APPLICATION_ID.toString(16).toUpperCase()}`);
    expect(format).toContain(`0x${READ_MODEL_APPLICATION_ID.toString(16).toUpperCase()}`);
  });

  it("docs/commit-log.md records the run-record rule", () => {
    expect(read("docs/commit-log.md")).toContain(
      "A run record never names refused data: hold back",
    );
  });
});
