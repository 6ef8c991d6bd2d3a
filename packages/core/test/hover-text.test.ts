/**
 * What an editor shows for a published name speaks of the API a user calls.
 * The documentation of every name the five entries export — and of each of
 * its members — is read from the published declarations (dist), as an
 * editor's hover reads it, and must name no source file or folder of core
 * and no type the entries do not export. (A file's header comment becomes
 * the documentation of its first declaration when that one has none.)
 */
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import ts from "typescript";
import { describe, expect, it } from "vitest";

const DIST = fileURLToPath(new URL("../dist/", import.meta.url));
const ENTRIES = ["index", "commit-log", "datastore", "engine", "port/index"].map((name) =>
  join(DIST, `${name}.d.ts`),
);

/** A path of core's source: a file (`scope.ts`), or a folder's (`workspace/`, `../schema/`). */
const SOURCE_PATH =
  /\b[a-z][a-z0-9-]*\.ts\b|\.\.?\/[a-z]|\b(port|transaction|schema|changes|connection|commit-log|workspace|run|stores|routing|repositories)\/[a-z]/;

/** The documentation of every exported name and of each of its members, by where it stands. */
function publishedDocs(): { docs: Map<string, string>; hidden: Set<string> } {
  const program = ts.createProgram(ENTRIES, { noEmit: true, strict: true, types: [] });
  const checker = program.getTypeChecker();
  const docs = new Map<string, string>();
  const exported = new Set<string>();
  const note = (where: string, symbol: ts.Symbol) => {
    const text = ts.displayPartsToString(symbol.getDocumentationComment(checker));
    const tags = symbol.getJsDocTags(checker).map((tag) => ts.displayPartsToString(tag.text));
    docs.set(where, [text, ...tags].join(" "));
  };
  for (const entry of ENTRIES) {
    const module = checker.getSymbolAtLocation(program.getSourceFile(entry)!)!;
    for (const alias of checker.getExportsOfModule(module)) {
      exported.add(alias.name);
      const symbol = alias.flags & ts.SymbolFlags.Alias ? checker.getAliasedSymbol(alias) : alias;
      note(alias.name, symbol);
      for (const member of symbol.members?.values() ?? []) {
        note(`${alias.name}.${String(member.escapedName)}`, member);
      }
      for (const member of checker.getPropertiesOfType(checker.getDeclaredTypeOfSymbol(symbol))) {
        note(`${alias.name}.${member.name}`, member);
      }
    }
  }
  // Types the declarations hold that no entry exports: CamelCase names of two words or more.
  const hidden = new Set<string>();
  for (const source of program.getSourceFiles()) {
    if (!source.fileName.startsWith(DIST)) continue;
    ts.forEachChild(source, (node) => {
      const named =
        ts.isInterfaceDeclaration(node) ||
        ts.isClassDeclaration(node) ||
        ts.isTypeAliasDeclaration(node);
      const name = named ? node.name?.text : undefined;
      if (name !== undefined && !exported.has(name) && /^[A-Z][a-z0-9]+[A-Z]/.test(name)) {
        hidden.add(name);
      }
    });
  }
  return { docs, hidden };
}

describe("the published documentation", () => {
  const { docs, hidden } = publishedDocs();

  it("of every exported name and member names no source file or folder of core", () => {
    expect(docs.size).toBeGreaterThan(500);
    const naming = [...docs].filter(([, text]) => SOURCE_PATH.test(text));
    expect(naming.map(([where, text]) => `${where}: ${text.match(SOURCE_PATH)![0]}`)).toEqual([]);
  });

  it("names no type the entries do not export", () => {
    expect(hidden.size).toBeGreaterThan(5);
    const words = new RegExp(`\\b(${[...hidden].join("|")})\\b`);
    const naming = [...docs].filter(([, text]) => words.test(text));
    expect(naming.map(([where, text]) => `${where}: ${text.match(words)![0]}`)).toEqual([]);
  });

  it("the scan tells a source path from an API's words", () => {
    for (const path of ["(scope.ts)", "see ./chain.ts", "../schema/", "workspace/roots"]) {
      expect(SOURCE_PATH.test(path), path).toBe(true);
    }
    for (const words of ["read/write", "node:crypto", "`lease.read(fn)`", "1/32 of a page"]) {
      expect(SOURCE_PATH.test(words), words).toBe(false);
    }
  });
});
