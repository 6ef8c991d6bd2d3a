/**
 * Child processes load an adapter from a file: URL the suite resolves from
 * the subject's own package, so an adapter outside this repository needs no
 * change here. These tests build small package trees on disk and resolve in them.
 */
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import { afterAll, describe, expect, it } from "vitest";
import { resolveDriverModule } from "../src/resolve.js";

const top = mkdtempSync(join(tmpdir(), "runledger-resolve-"));
afterAll(() => rmSync(top, { recursive: true, force: true }));

function packageAt(directory: string, manifest: object): void {
  mkdirSync(directory, { recursive: true });
  writeFileSync(join(directory, "package.json"), JSON.stringify(manifest));
}

const mine = join(top, "adapter-mine");
packageAt(mine, {
  name: "@me/adapter-mine",
  exports: { ".": { types: "./dist/index.d.ts", import: "./dist/index.js" } },
});
mkdirSync(join(mine, "test"));
packageAt(join(mine, "node_modules", "peer-lib"), {
  name: "peer-lib",
  exports: { ".": { require: "./cjs.js", default: "./esm.js" }, "./extra": "./extra.js" },
});
packageAt(join(top, "node_modules", "hoisted"), { name: "hoisted", main: "main.js" });

const url = (path: string) => pathToFileURL(path).href;

describe("resolveDriverModule", () => {
  it("resolves the subject's own package name to its import export, from a test file inside it", () => {
    const root = url(join(mine, "test", "conformance.test.ts"));
    expect(resolveDriverModule("@me/adapter-mine", root)).toBe(url(join(mine, "dist/index.js")));
  });

  it("finds a dependency in the package's node_modules and picks the import-capable condition", () => {
    expect(resolveDriverModule("peer-lib", mine)).toBe(
      url(join(mine, "node_modules/peer-lib/esm.js")),
    );
    expect(resolveDriverModule("peer-lib/extra", mine)).toBe(
      url(join(mine, "node_modules/peer-lib/extra.js")),
    );
  });

  it("walks up to a hoisted node_modules and falls back to main", () => {
    expect(resolveDriverModule("hoisted", join(mine, "test"))).toBe(
      url(join(top, "node_modules/hoisted/main.js")),
    );
  });

  it("passes absolute paths and file: URLs through", () => {
    expect(resolveDriverModule("/opt/driver.js", mine)).toBe(url("/opt/driver.js"));
    expect(resolveDriverModule("file:///opt/driver.js", mine)).toBe("file:///opt/driver.js");
  });

  it("names the specifier, the start and the remedies when nothing is found", () => {
    expect(() => resolveDriverModule("@me/missing", mine)).toThrow(
      /"@me\/missing" from .*adapter-mine: install it .*subject\.root/,
    );
  });
});
