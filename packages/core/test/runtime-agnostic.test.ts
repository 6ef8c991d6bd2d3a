/**
 * Core must run on Node, Deno, Bun and workers (docs/architecture.md): no file under
 * packages/core/src may import a Node built-in (with or without the `node:`
 * prefix) or a SQL driver. This scans the source text, so it also catches
 * type-only imports and dynamic imports that a bundle would hide.
 */
import { readdirSync, readFileSync, statSync } from "node:fs";
import { builtinModules } from "node:module";
import { join, relative } from "node:path";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";

const SOURCE = fileURLToPath(new URL("../src/", import.meta.url));

const SPECIFIER_PATTERNS = [
  /\bfrom\s*["']([^"']+)["']/g, // import … from "x", export … from "x"
  /\bimport\s*["']([^"']+)["']/g, // import "x"
  /\bimport\s*\(\s*["']([^"']+)["']\s*\)/g, // import("x"), import("x").Type
  /\brequire\s*\(\s*["']([^"']+)["']\s*\)/g, // require("x")
  /<reference\s+types\s*=\s*["']([^"']+)["']/g, // /// <reference types="x" />
];

const BUILTINS = new Set(builtinModules);

/** Why a module specifier is not allowed in core, or undefined when it is. */
function refusal(specifier: string): string | undefined {
  if (specifier.startsWith("node:")) return "a node: module";
  if (BUILTINS.has(specifier) || BUILTINS.has(specifier.split("/")[0] ?? "")) {
    return "a Node built-in";
  }
  if (specifier === "node" || specifier === "@types/node") return "Node's types";
  if (specifier === "better-sqlite3" || specifier.startsWith("better-sqlite3/")) {
    return "a SQL driver";
  }
  if (specifier === "libsql" || specifier.startsWith("@libsql/")) return "a SQL driver";
  return undefined;
}

function forbiddenImports(text: string): string[] {
  const found: string[] = [];
  for (const pattern of SPECIFIER_PATTERNS) {
    for (const match of text.matchAll(pattern)) {
      const specifier = match[1]!;
      const why = refusal(specifier);
      if (why !== undefined) found.push(`${specifier} (${why})`);
    }
  }
  return found;
}

function filesUnder(directory: string): string[] {
  return readdirSync(directory).flatMap((name) => {
    const path = join(directory, name);
    return statSync(path).isDirectory() ? filesUnder(path) : [path];
  });
}

describe("core stays runtime-agnostic", () => {
  it("no file in packages/core/src imports a node: module, a Node built-in or a SQL driver", () => {
    const files = filesUnder(SOURCE);
    expect(files.map((file) => relative(SOURCE, file))).toContain(join("port", "errors.ts"));
    const offenders = files.flatMap((file) =>
      forbiddenImports(readFileSync(file, "utf8")).map(
        (what) => `${relative(SOURCE, file)}: ${what}`,
      ),
    );
    expect(offenders).toStrictEqual([]);
  });

  it("the scan recognizes every import form it guards against", () => {
    const sample = [
      'import { readFile } from "node:fs/promises";',
      "import path from 'path';",
      'import type { Database } from "better-sqlite3";',
      'export { createClient } from "@libsql/client";',
      'import "node:process";',
      'const lazy = await import("fs");',
      'type Buffer = import("node:buffer").Buffer;',
      'const crypto = require("crypto");',
      '/// <reference types="node" />',
      'import {\n  x,\n} from "libsql";',
    ].join("\n");
    expect(forbiddenImports(sample)).toHaveLength(10);
  });

  it("the scan lets core's own dependencies and relative modules through", () => {
    const allowed = [
      'import { sha256 } from "@noble/hashes/sha2.js";',
      'import { SqliteAdapter } from "kysely";',
      'export * from "./port/index.js";',
      'import type { Row } from "../port/values.js";',
    ].join("\n");
    expect(forbiddenImports(allowed)).toStrictEqual([]);
  });
});
