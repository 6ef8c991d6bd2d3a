/**
 * The public surface is chosen, not accumulated: each entry of
 * @runledger/core exports exactly the names docs/architecture.md lists for it
 * (and docs/api.md describes), a name has one home, the build and
 * package.json expose exactly these entries, and what the provider, scopes
 * and commit log keep for themselves is not reachable from outside.
 */
import { existsSync, readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import ts from "typescript";
import { describe, expect, it } from "vitest";
import tsupConfig from "../tsup.config.js";

const repo = fileURLToPath(new URL("../../../", import.meta.url));
const src = join(repo, "packages/core/src");
const read = (path: string) => readFileSync(join(repo, path), "utf8");

/** Each entry, by the specifier users import, and its source file under src/. */
const ENTRIES: Record<string, string> = {
  "@runledger/core": "index.ts",
  "@runledger/core/commit-log": "commit-log.ts",
  "@runledger/core/datastore": "datastore.ts",
  "@runledger/core/engine": "engine.ts",
  "@runledger/core/port": "port/index.ts",
};

/** Applications branch on errors and adapters (which import only the port) build them. */
const SHARED = ["RunledgerError", "RunledgerErrorCode", "isRunledgerError"];

/** The names each entry exports, types included, as the compiler sees them. */
function exportedNames(): Map<string, string[]> {
  const files = Object.values(ENTRIES).map((file) => join(src, file));
  const program = ts.createProgram(files, {
    module: ts.ModuleKind.NodeNext,
    moduleResolution: ts.ModuleResolutionKind.NodeNext,
    target: ts.ScriptTarget.ES2022,
    strict: true,
    noEmit: true,
  });
  const checker = program.getTypeChecker();
  const names = new Map<string, string[]>();
  for (const [entry, file] of Object.entries(ENTRIES)) {
    const source = program.getSourceFile(join(src, file));
    const symbol = source && checker.getSymbolAtLocation(source);
    if (symbol === undefined) throw new Error(`cannot read the exports of ${file}`);
    names.set(
      entry,
      checker
        .getExportsOfModule(symbol)
        .map((s) => s.name)
        .sort(),
    );
  }
  return names;
}

const actual = exportedNames();
const backticked = (text: string) =>
  [...text.matchAll(/`([A-Za-z_][A-Za-z0-9_]*)`/g)].map((m) => m[1]!);

describe("the entry points of @runledger/core", () => {
  it("docs/architecture.md states each entry's export count and every name", () => {
    const architecture = read("docs/architecture.md");
    for (const [entry, names] of actual) {
      const line = architecture.split("\n").find((l) => l.startsWith(`- \`${entry}\` (`));
      expect(line, `docs/architecture.md lists ${entry}`).toBeDefined();
      const [, count, list] = /^- `[^`]+` \((\d+)\): (.*)$/.exec(line!)!;
      expect({ entry, count: Number(count), names: backticked(list!).sort() }).toEqual({
        entry,
        count: names.length,
        names,
      });
    }
    const main = actual.get("@runledger/core")!.length;
    expect(architecture).toContain(`\`@runledger/core\`, exports\n**${main} names**`);
  });

  it("keeps the main entry to a few dozen names: the run API and its errors", () => {
    const main = actual.get("@runledger/core")!;
    // 61 since the run catalog's five names (RunEntry, RunList, RunListOptions, ReconcileOptions, ReconcileReport).
    expect(main.length).toBeLessThanOrEqual(64);
    // The spec's stable names for applications live here.
    for (const name of ["RunStore", "SCHEMA_V1", "SCHEMA_V1_DIGEST", "APPLICATION_ID"]) {
      expect(main).toContain(name);
    }
    for (const name of ["EMPTY_ROOT_ID", "RunledgerError", "JournalEvent", "JsonObject"]) {
      expect(main).toContain(name);
    }
    expect(actual.get("@runledger/core/port")).toContain("Driver");
  });

  it("gives every name one home; only the error names are shared with the port", () => {
    const homes = new Map<string, string[]>();
    for (const [entry, names] of actual) {
      for (const name of names) homes.set(name, [...(homes.get(name) ?? []), entry]);
    }
    const twice = [...homes].filter(([, entries]) => entries.length > 1).map(([name]) => name);
    expect(twice.sort()).toEqual([...SHARED].sort());
    for (const name of SHARED) {
      expect(homes.get(name)).toEqual(["@runledger/core", "@runledger/core/port"]);
    }
  });

  it("docs/api.md describes every name of every entry in that entry's section, and no other", () => {
    const api = read("docs/api.md");
    const sections = api.split(/^## /m).slice(1);
    for (const [entry, names] of actual) {
      const section = sections.find((s) => s.startsWith(`\`${entry}\`\n`));
      expect(section, `docs/api.md has a section for ${entry}`).toBeDefined();
      const described = section!
        .split("\n")
        .filter((line) => line.startsWith("- `"))
        .flatMap((line) => backticked(line.split(" — ")[0]!));
      expect(new Set(described).size, `${entry}: a name described twice`).toBe(described.length);
      expect({ entry, names: described.sort() }).toEqual({ entry, names });
    }
    for (const [entry, names] of actual) {
      expect(api).toMatch(new RegExp(`\\| \`${entry}\`\\s+\\|[^|]+\\| ${names.length}\\s+\\|`));
    }
  });

  it("exposes exactly these entries through package.json and the build", () => {
    const manifest = JSON.parse(read("packages/core/package.json")) as {
      exports: Record<string, { types: string; default: string }>;
    };
    const subpaths = Object.keys(ENTRIES).map((entry) => entry.replace("@runledger/core", "."));
    expect(Object.keys(manifest.exports).sort()).toEqual(subpaths.sort());
    const built = (tsupConfig as { entry: Record<string, string> }).entry;
    for (const [entry, file] of Object.entries(ENTRIES)) {
      const target = manifest.exports[entry.replace("@runledger/core", ".")]!;
      const name = target.default.replace(/^\.\/dist\//, "").replace(/\.js$/, "");
      expect(target.types).toBe(`./dist/${name}.d.ts`);
      expect(built[name]).toBe(`src/${file}`);
      expect(existsSync(join(src, file))).toBe(true);
    }
    expect(Object.keys(built).length).toBe(Object.keys(ENTRIES).length);
  });

  it("opens each entry with a header saying what it is for and one example", () => {
    for (const [entry, file] of Object.entries(ENTRIES)) {
      const text = readFileSync(join(src, file), "utf8");
      const header = text.slice(0, text.indexOf("*/"));
      expect(text.startsWith("/**"), file).toBe(true);
      expect(header, file).toContain(`\`${entry}\``);
      expect(header.match(/@example/g)?.length, file).toBe(1);
      expect(header.match(/```ts/g)?.length, file).toBe(1);
    }
  });
});

describe("what the engine keeps for itself", () => {
  it("a commit log's database access is reached only through commitLogAccess", async () => {
    const { CommitLog } = await import("../src/commit-log/log.js");
    const { commitLogAccess } = await import("../src/commit-log.js");
    expect(Object.getOwnPropertyNames(CommitLog.prototype)).not.toContain("access");
    const access = { location: "x", transact: async () => 1, read: async () => 2 };
    const log = new CommitLog(access as never, {} as never, "id", async () => undefined);
    expect(commitLogAccess(log)).toBe(access);
  });

  it("a scope is ended by its owner only, not through a public method", async () => {
    const { WriteScope, ReadScope, endScope } = await import("../src/transaction/scope.js");
    const executor = { execute: async () => ({ rows: [], changes: 0, lastInsertRowid: 0 }) };
    const scope = new ReadScope(executor as never);
    expect("end" in scope).toBe(false);
    expect("end" in WriteScope.prototype).toBe(false);
    await expect(scope.execute("SELECT 1")).resolves.toBeDefined();
    endScope(scope);
    await expect(scope.execute("SELECT 1")).rejects.toMatchObject({ code: "transaction_closed" });
  });

  it("the published declarations leave out what is marked @internal", () => {
    const dist = join(repo, "packages/core/dist");
    const declarations = [
      ...readdirSync(dist).filter((name) => name.endsWith(".d.ts")),
      "port/index.d.ts",
    ].map((name) => readFileSync(join(dist, name), "utf8"));
    expect(declarations.join("\n")).toContain("declare class RunStore");
    for (const internal of [
      "releaseLease",
      "discardPoisoned",
      "LeaseOwner",
      "appendText",
      "formatAt",
    ]) {
      expect(
        declarations.filter((text) => text.includes(internal)),
        internal,
      ).toEqual([]);
    }
  });

  it("a provider's lease bookkeeping is not part of its surface", async () => {
    const { ConnectionProvider } = await import("../src/engine.js");
    const members = Object.getOwnPropertyNames(ConnectionProvider.prototype);
    expect(members).toContain("open");
    expect(members).not.toContain("releaseLease");
    expect(members).not.toContain("discardPoisoned");
  });
});
