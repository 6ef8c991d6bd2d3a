/**
 * Keeps the kinds of drift the docs once had from coming back: a count of
 * the port's methods that no longer matched the interfaces, an example whose
 * result comment lacked a field, paths to files that do not exist, and
 * references to sections of a design document that is not in the repository.
 * Counts and field lists are read from the TypeScript declarations, so a
 * change to an interface fails here until its docs follow.
 */
import { existsSync, readdirSync, readFileSync, statSync } from "node:fs";
import { join, relative } from "node:path";
import { fileURLToPath } from "node:url";
import ts from "typescript";
import { describe, expect, it } from "vitest";

const repo = fileURLToPath(new URL("../../../", import.meta.url));
const read = (path: string) => readFileSync(join(repo, path), "utf8");

/** The files whose interfaces the docs are checked against, compiled once. */
const DECLARATIONS = ["packages/core/src/port/driver.ts", "packages/core/src/commit-log/types.ts"];
let program: ts.Program | undefined;

/** The members of each named interface declared in `file`, inherited ones included. */
function membersOf(file: string, names: readonly string[]) {
  const path = join(repo, file);
  program ??= ts.createProgram(
    DECLARATIONS.map((declarations) => join(repo, declarations)),
    { strict: true, noEmit: true, types: [] },
  );
  const checker = program.getTypeChecker();
  const source = program.getSourceFile(path);
  if (source === undefined) throw new Error(`cannot read ${file}`);
  const found = new Map<string, { methods: string[]; properties: string[] }>();
  ts.forEachChild(source, (node) => {
    if (!ts.isInterfaceDeclaration(node) || !names.includes(node.name.text)) return;
    const type = checker.getTypeAtLocation(node.name);
    const methods: string[] = [];
    const properties: string[] = [];
    for (const symbol of checker.getPropertiesOfType(type)) {
      const isMethod = (symbol.declarations ?? []).some(
        (d) => ts.isMethodSignature(d) || ts.isMethodDeclaration(d),
      );
      (isMethod ? methods : properties).push(symbol.name);
    }
    found.set(node.name.text, { methods, properties });
  });
  for (const name of names) if (!found.has(name)) throw new Error(`${file} declares no ${name}`);
  return found;
}

const NUMBER_WORDS = [
  "zero",
  "one",
  "two",
  "three",
  "four",
  "five",
  "six",
  "seven",
  "eight",
  "nine",
  "ten",
  "eleven",
  "twelve",
  "thirteen",
  "fourteen",
  "fifteen",
  "sixteen",
  "seventeen",
  "eighteen",
  "nineteen",
  "twenty",
];

/** Markdown an outside reader sees: docs/ and every README. */
function markdownFiles(): string[] {
  const docs = readdirSync(join(repo, "docs"))
    .filter((name) => name.endsWith(".md"))
    .map((name) => `docs/${name}`);
  const readmes = readdirSync(join(repo, "packages"))
    .map((name) => `packages/${name}/README.md`)
    .filter((path) => existsSync(join(repo, path)));
  return ["README.md", ...docs, ...readmes];
}

/** Source and test files of every package and the benchmarks. */
function codeFiles(): string[] {
  const walk = (directory: string): string[] =>
    readdirSync(directory).flatMap((name) => {
      if (name === "node_modules" || name === "dist") return [];
      const path = join(directory, name);
      if (statSync(path).isDirectory()) return walk(path);
      return /\.(ts|mjs|js)$/.test(name) && !name.endsWith(".d.ts") ? [path] : [];
    });
  return [...walk(join(repo, "packages")), ...walk(join(repo, "bench", "src"))].map((path) =>
    relative(repo, path),
  );
}

describe("docs do not drift from the code", () => {
  it("states the port's method count as the Driver interfaces have it", () => {
    const port = membersOf("packages/core/src/port/driver.ts", [
      "Driver",
      "DriverConnection",
      "DriverTransaction",
    ]);
    const count = [...port.values()].reduce((sum, { methods }) => sum + methods.length, 0);
    const stated = `${NUMBER_WORDS[count]} methods`;
    for (const doc of ["docs/architecture.md", "docs/writing-an-adapter.md"]) {
      const text = read(doc).replace(/\s+/g, " ");
      expect(text, `${doc} says "${stated}"`).toContain(stated);
      for (const word of NUMBER_WORDS.filter((w) => w !== NUMBER_WORDS[count])) {
        expect(text, `${doc} still says "${word} methods"`).not.toMatch(
          new RegExp(`\\b${word} methods over`),
        );
      }
    }
    const guide = read("docs/writing-an-adapter.md");
    for (const { methods } of port.values()) {
      for (const method of methods) expect(guide, method).toContain(`\`${method}\``);
    }
  });

  it("lists every field of a unit's commit and abandon results in commit-log.md's example", () => {
    const results = membersOf("packages/core/src/commit-log/types.ts", [
      "CommitResult",
      "AbandonResult",
    ]);
    const doc = read("docs/commit-log.md");
    const commit = /await unit\.commit\(\); \/\/ \{ ([^}]+) \}/.exec(doc)?.[1];
    expect(commit?.split(", ").sort()).toStrictEqual(
      results.get("CommitResult")!.properties.sort(),
    );
    const abandon = /answers `\{ ([^}]+) \}`/.exec(doc)?.[1];
    expect(abandon?.split(", ").sort()).toStrictEqual(
      results.get("AbandonResult")!.properties.sort(),
    );
  });

  it("names only repository paths that exist (build output aside)", () => {
    const missing: string[] = [];
    for (const doc of markdownFiles()) {
      const text = read(doc);
      for (const match of text.matchAll(/\b(?:packages|scripts|bench|docs)\/[A-Za-z0-9_./-]+/g)) {
        const path = match[0].replace(/[.]+$/, "");
        if (/(^|\/)(dist|out|node_modules)(\/|$)/.test(path)) continue;
        if (!existsSync(join(repo, path))) missing.push(`${doc}: ${path}`);
      }
    }
    for (const file of codeFiles()) {
      for (const match of read(file).matchAll(/\bdocs\/[a-z-]+\.md\b/g)) {
        if (!existsSync(join(repo, match[0]))) missing.push(`${file}: ${match[0]}`);
      }
    }
    expect(missing).toStrictEqual([]);
  });

  it("refers to no section of a design document that is not in the repository", () => {
    const offenders: string[] = [];
    for (const file of [...markdownFiles(), ...codeFiles()]) {
      const lines = read(file).split("\n");
      lines.forEach((line, index) => {
        if (/\bspec §|\bSPEC\.md\b/i.test(line))
          offenders.push(`${file}:${index + 1}: ${line.trim()}`);
      });
    }
    expect(offenders).toStrictEqual([]);
  });
});
