/**
 * Who owns each table, held by a test. docs/architecture.md ("Who owns each
 * table") gives every table and view of every frozen manifest one owning
 * folder; here every SQL text of every source file — each string or
 * template literal that reads as SQL, DDL included — may name only tables
 * its own folder owns, the table must list exactly the tables the manifests
 * hold, and every owner it names must be a folder. There is no exceptions
 * list: SQL that names another folder's table moves to that folder (or the
 * table changes in the docs for everyone to read).
 */
import { existsSync, readFileSync, statSync } from "node:fs";
import { dirname, join, relative, sep } from "node:path";
import { fileURLToPath } from "node:url";
import ts from "typescript";
import { describe, expect, it } from "vitest";
import { MANIFESTS } from "./manifests.js";
import { SRC, sourceFiles } from "./source-files.js";

const ARCHITECTURE = fileURLToPath(new URL("../../../docs/architecture.md", import.meta.url));

/** One row of the table: the tables of a manifest that one folder owns. */
interface Owned {
  readonly manifest: string;
  readonly tables: readonly string[];
  /** The folder, relative to src, without its trailing slash ("run/catalog"). */
  readonly owner: string;
}

/** The rows of the table in the section "Who owns each table". */
function readOwners(markdown: string): Owned[] {
  const section = markdown.split(/^## Who owns each table$/m)[1]?.split(/^## /m)[0] ?? "";
  const rows: Owned[] = [];
  for (const line of section.split("\n")) {
    const cells = line.match(/^\|(.*)\|(.*)\|(.*)\|\s*$/);
    if (cells === null) continue;
    const manifest = cells[1]!.match(/`([A-Z0-9_]+)`/)?.[1];
    const owner = cells[3]!.match(/`([a-z0-9/-]+)\/`/)?.[1];
    if (manifest === undefined || owner === undefined) continue;
    // A cell's asides ("(a view of the journal)") name no table.
    const names = cells[2]!.replace(/\([^)]*\)/g, "").matchAll(/`([a-z_][a-z0-9_]*)`/g);
    rows.push({ manifest, owner, tables: [...names].map((match) => match[1]!) });
  }
  return rows;
}

/** Uppercase SQL keywords: a literal holding one is SQL (a message never shouts). */
const SQL = /\b(SELECT|INSERT|UPDATE|DELETE|CREATE|FROM|JOIN|INTO|WHERE|VALUES|PRAGMA)\b/;

/** The text of every string and template literal of a source, a template's substitutions as " ? ". */
function literalsIn(text: string): string[] {
  const source = ts.createSourceFile("source.ts", text, ts.ScriptTarget.Latest, true);
  const found: string[] = [];
  const visit = (node: ts.Node) => {
    if (ts.isStringLiteral(node) || ts.isNoSubstitutionTemplateLiteral(node)) {
      found.push(node.text);
    } else if (ts.isTemplateExpression(node)) {
      found.push(
        [node.head.text, ...node.templateSpans.map((span) => span.literal.text)].join(" ? "),
      );
    }
    ts.forEachChild(node, visit);
  };
  visit(source);
  return found;
}

/** The tables of `known` that a source's SQL names (a name right after AS is an alias, not a table). */
function tablesNamed(text: string, known: ReadonlySet<string>): Set<string> {
  const named = new Set<string>();
  for (const literal of literalsIn(text)) {
    if (!SQL.test(literal)) continue;
    for (const match of literal.matchAll(/(\bAS\s+)?\b([A-Za-z_][A-Za-z0-9_]*)\b/g)) {
      if (match[1] === undefined && known.has(match[2]!)) named.add(match[2]!);
    }
  }
  return named;
}

/** A source file's folder: its own directory, relative to src ("" for the entry points). */
function folderOf(file: string): string {
  return dirname(file).split(sep).join("/").replace(/^\.$/, "");
}

/** A source file: its path relative to src, and its text. */
interface Source {
  readonly file: string;
  readonly text: string;
}

/** Each table a source names that its folder does not own, as "file: table (owner/)". */
function trespasses(sources: readonly Source[], owners: readonly Owned[]): string[] {
  const ownersOf = new Map<string, Set<string>>();
  for (const { owner, tables } of owners) {
    for (const table of tables) ownersOf.set(table, (ownersOf.get(table) ?? new Set()).add(owner));
  }
  const known = new Set(ownersOf.keys());
  return sources.flatMap(({ file, text }) =>
    [...tablesNamed(text, known)]
      .filter((table) => !ownersOf.get(table)!.has(folderOf(file)))
      .map((table) => `${file}: ${table} (${[...ownersOf.get(table)!].join("/, ")}/)`),
  );
}

const owners = readOwners(readFileSync(ARCHITECTURE, "utf8"));
const sources: Source[] = sourceFiles()
  .map((path) => ({ file: relative(SRC, path), text: readFileSync(path, "utf8") }))
  .sort((a, b) => (a.file < b.file ? -1 : 1));

describe("who owns each table, as docs/architecture.md lists them", () => {
  it("the table lists every table and view of every manifest once, and nothing else", () => {
    const listed = Object.keys(MANIFESTS).map((name) =>
      owners
        .filter((row) => row.manifest === name)
        .flatMap((row) => row.tables)
        .sort(),
    );
    const held = Object.values(MANIFESTS).map((manifest) =>
      manifest.objects
        .filter((object) => object.type === "table" || object.type === "view")
        .map((object) => object.name)
        .sort(),
    );
    expect(listed.flat().length).toBeGreaterThan(25);
    expect(listed).toStrictEqual(held);
    expect(owners.every((row) => row.manifest in MANIFESTS)).toBe(true);
  });

  it("every owner it names is a folder of src", () => {
    for (const { owner } of owners) {
      const folder = join(SRC, owner);
      expect(existsSync(folder) && statSync(folder).isDirectory(), owner).toBe(true);
    }
  });

  it("no source file's SQL names a table another folder owns, DDL included", () => {
    const known = new Set(owners.flatMap((row) => row.tables));
    const naming = sources.filter(({ text }) => tablesNamed(text, known).size > 0);
    expect(naming.length).toBeGreaterThan(30);
    expect(trespasses(sources, owners)).toStrictEqual([]);
  });
});

describe("the ownership scan itself", () => {
  const sample = [
    "const HEAD = `SELECT sequence, root_id FROM journal ORDER BY sequence DESC LIMIT 1`;",
    'const MESSAGE = "the journal refused an event";',
    // A template with a substitution (split so that the linter does not take it for a mistake).
    "const COUNTS = `SELECT (SELECT count(*) FROM run) AS runs, $" + "{other}`;",
    'const CLAUSE = "DELETE FROM workspace_pin WHERE name = ?";',
    "// SELECT * FROM document (a comment is not SQL)",
  ].join("\n");

  it("finds the tables SQL literals name, and no word of a message, an alias or a comment", () => {
    const known = new Set(["journal", "run", "runs", "workspace_pin", "document"]);
    expect([...tablesNamed(sample, known)].sort()).toStrictEqual([
      "journal",
      "run",
      "workspace_pin",
    ]);
  });

  it("reads the owner table: the manifest, the tables without their asides, the folder", () => {
    const markdown = [
      "## Who owns each table",
      "",
      "| database (manifest) | tables | owner |",
      "| --- | --- | --- |",
      "| run (`SCHEMA_V1`) | `run`, `journal_view` (a view of `journal`) | `run/` |",
      "| catalog (`CATALOG_SCHEMA_V1`) | `runs` | `run/catalog/` |",
      "## Next",
      "| x (`OTHER`) | `elsewhere` | `x/` |",
    ].join("\n");
    expect(readOwners(markdown)).toStrictEqual([
      { manifest: "SCHEMA_V1", owner: "run", tables: ["run", "journal_view"] },
      { manifest: "CATALOG_SCHEMA_V1", owner: "run/catalog", tables: ["runs"] },
    ]);
  });

  it("finds a file naming another folder's table, and passes its own and a subfolder's own", () => {
    const rows: Owned[] = [
      { manifest: "A", owner: "run", tables: ["journal"] },
      { manifest: "B", owner: "run/catalog", tables: ["runs"] },
    ];
    const source = (file: string, sql: string): Source => ({ file, text: `const Q = "${sql}";` });
    expect(
      trespasses(
        [
          source(join("run", "journal.ts"), "SELECT 1 FROM journal"),
          source(join("run", "catalog", "list.ts"), "SELECT 1 FROM runs"),
          source(join("run", "catalog", "list.ts"), "SELECT 1 FROM journal"),
          source(join("workspace", "roots.ts"), "SELECT 1 FROM journal"),
          source(join("run", "store.ts"), "SELECT 1 FROM runs"),
        ],
        rows,
      ),
    ).toStrictEqual([
      `${join("run", "catalog", "list.ts")}: journal (run/)`,
      `${join("workspace", "roots.ts")}: journal (run/)`,
      `${join("run", "store.ts")}: runs (run/catalog/)`,
    ]);
  });
});
