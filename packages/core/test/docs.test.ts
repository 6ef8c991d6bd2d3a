import { readdirSync, readFileSync, statSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";
import { DATASTORE_APPLICATION_ID, DATASTORE_SCHEMA_V1_DIGEST } from "../src/datastore.js";
import { APPLICATION_ID, EMPTY_ROOT_ID, SCHEMA_V1_DIGEST } from "../src/index.js";

const repo = fileURLToPath(new URL("../../../", import.meta.url));
const read = (path: string) => readFileSync(join(repo, path), "utf8");

function sourceFiles(directory: string): string[] {
  return readdirSync(directory).flatMap((name) => {
    const path = join(directory, name);
    if (statSync(path).isDirectory()) return sourceFiles(path);
    return path.endsWith(".ts") && !path.endsWith(".d.ts") ? [path] : [];
  });
}

/** Codes the source can raise: RunledgerError constructions and translation tables. */
function codesUsedIn(files: string[]): Set<string> {
  const codes = new Set<string>();
  const patterns = [
    /new RunledgerError\(\s*"([a-z_]+)"/g,
    /\bcode: "([a-z_]+)"/g,
    /^\s+[A-Z_]+: "([a-z_]+)",$/gm,
  ];
  for (const file of files) {
    const text = readFileSync(file, "utf8");
    for (const pattern of patterns)
      for (const match of text.matchAll(pattern)) codes.add(match[1]!);
  }
  return codes;
}

describe("docs stay true to the code", () => {
  it("every error code raised in core and the adapters is listed in docs/errors.md", () => {
    const listed = new Set(
      [...read("docs/errors.md").matchAll(/^\| `([a-z_]+)`\s*\|/gm)].map((m) => m[1]!),
    );
    const files = ["packages/core/src", "packages/adapter-node/src", "packages/adapter-libsql/src"]
      .map((dir) => join(repo, dir))
      .flatMap(sourceFiles);
    const used = codesUsedIn(files);
    expect(used.size).toBeGreaterThan(20);
    const missing = [...used].filter((code) => !listed.has(code)).sort();
    expect(missing).toEqual([]);
  });

  it("docs/file-format.md states the current schema digest, empty root and application id", () => {
    const format = read("docs/file-format.md");
    expect(format).toContain(`SCHEMA_V1_DIGEST = ${SCHEMA_V1_DIGEST}`);
    expect(format).toContain(`EMPTY_ROOT_ID  = ${EMPTY_ROOT_ID}`);
    expect(format).toContain(`0x${APPLICATION_ID.toString(16).toUpperCase()}`);
    expect(format).toContain(`DATASTORE_SCHEMA_V1_DIGEST = ${DATASTORE_SCHEMA_V1_DIGEST}`);
    expect(format).toContain(`0x${DATASTORE_APPLICATION_ID.toString(16).toUpperCase()}`);
  });
});
