/**
 * The layering of docs/architecture.md for typed changes and the commit log: changes/
 * (layer 2) reaches only port/; commitlog/ (layer 3) reaches only layers 1–2
 * and changes/, never the connection provider beside it; stores/ (layer 4)
 * composes them. Type-only imports count too.
 */
import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";

const src = fileURLToPath(new URL("../src/", import.meta.url));

function importsOf(folder: string): { file: string; target: string }[] {
  return readdirSync(join(src, folder))
    .filter((name) => name.endsWith(".ts"))
    .flatMap((name) => {
      const text = readFileSync(join(src, folder, name), "utf8");
      return [...text.matchAll(/\bfrom\s+"([^"]+)"/g)].map((m) => ({
        file: `${folder}/${name}`,
        target: m[1]!,
      }));
    });
}

const ALLOWED: Record<string, RegExp> = {
  changes: /^(\.\/|\.\.\/port\/)/,
  commitlog: /^(\.\/|\.\.\/(port|schema|transaction|changes)\/)/,
  stores: /^(\.\/|\.\.\/(port|schema|transaction|changes|connection|commitlog)\/)/,
};

describe("commit-log layers", () => {
  for (const [folder, allowed] of Object.entries(ALLOWED)) {
    it(`${folder}/ imports only from the layers below it`, () => {
      const imports = importsOf(folder);
      expect(imports.length).toBeGreaterThan(0);
      expect(imports.filter(({ target }) => !allowed.test(target))).toEqual([]);
    });
  }
});
