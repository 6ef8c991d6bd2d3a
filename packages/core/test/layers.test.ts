/**
 * The layering of core, held by a test. docs/architecture.md ("The layers of
 * core") puts every folder of src on a layer; here every import of every
 * source file — type-only imports, re-exports and `import("…")` types
 * included — must stay in its own folder or go to a lower layer, every
 * folder must be in the table (and every folder the table names must
 * exist), and no two files may import each other at runtime, however long
 * the ring. There is no exceptions list: an import that breaks a rule is
 * fixed, or the table changes in the docs for everyone to read.
 */
import { readFileSync } from "node:fs";
import { dirname, join, relative, sep } from "node:path";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";
import { SRC, sourceFiles } from "./source-files.js";

const ARCHITECTURE = fileURLToPath(new URL("../../../docs/architecture.md", import.meta.url));
/** The table's name for the files directly in src (the entry points). */
const ROOT = "*.ts";

/** The table: each folder (`port`, …, or ROOT) and its layer. */
function readLayers(markdown: string): Map<string, number> {
  const section = markdown.split(/^## The layers of core$/m)[1]?.split(/^## /m)[0] ?? "";
  const block = section.match(/```\n([\s\S]*?)```/)?.[1] ?? "";
  const layers = new Map<string, number>();
  for (const line of block.split("\n")) {
    const match = line.match(/^\s*(\d+)\s+(.*)$/);
    if (match === null) continue;
    // The names come before any description (" — …") or aside ("(…)").
    const names = match[2]!.split(" — ")[0]!.replace(/\([^)]*\)/g, "");
    for (const [name] of names.matchAll(/\*\.ts|[a-z][a-z0-9-]*(?=\/)/g)) {
      layers.set(name, Number(match[1]));
    }
  }
  return layers;
}

interface Import {
  readonly specifier: string;
  /** False for `import type` / `export type … from`: erased, no runtime edge. */
  readonly runtime: boolean;
}

/** Every module specifier a source text imports or re-exports, and whether it survives compilation. */
function importsIn(text: string): Import[] {
  const found: Import[] = [];
  // import … from "x"; export … from "x" (one statement, maybe over several lines)
  for (const m of text.matchAll(
    /^\s*(import|export)\s+(type\s+)?[^;]*?\bfrom\s*["']([^"']+)["']/gm,
  )) {
    found.push({ specifier: m[3]!, runtime: m[2] === undefined });
  }
  for (const m of text.matchAll(/^\s*import\s*["']([^"']+)["']/gm)) {
    found.push({ specifier: m[1]!, runtime: true });
  }
  // import("x").Type in a type position, or a dynamic import: a reference, not a static edge.
  for (const m of text.matchAll(/\bimport\s*\(\s*["']([^"']+)["']\s*\)/g)) {
    found.push({ specifier: m[1]!, runtime: false });
  }
  return found;
}

/** The table's folder a file (relative to src) belongs to. */
function folderOf(file: string): string {
  return file.includes(sep) ? file.split(sep)[0]! : ROOT;
}

/** The file (relative to src, .ts) a relative specifier names, or undefined for a package. */
function resolve(from: string, specifier: string): string | undefined {
  if (!specifier.startsWith(".")) return undefined;
  const target = join(dirname(from), specifier).replace(/\.js$/, ".ts");
  return target;
}

interface Edge {
  readonly from: string;
  readonly to: string;
  readonly runtime: boolean;
}

function edgesOf(files: string[]): Edge[] {
  return files.flatMap((file) =>
    importsIn(readFileSync(join(SRC, file), "utf8")).flatMap(({ specifier, runtime }) => {
      const to = resolve(file, specifier);
      return to === undefined ? [] : [{ from: file, to, runtime }];
    }),
  );
}

/** An import that leaves its folder for one not below it. */
function breaks(edges: Edge[], layers: Map<string, number>): string[] {
  return edges.flatMap(({ from, to }) => {
    const source = folderOf(from);
    const target = folderOf(to);
    if (source === target) return [];
    const above = layers.get(source);
    const below = layers.get(target);
    if (above !== undefined && below !== undefined && below < above) return [];
    return [`${from} → ${to} (layer ${above} → ${target}, layer ${below})`];
  });
}

/** Every ring of runtime imports, each as the files around it (found once, from its first file). */
function cycles(edges: Edge[]): string[][] {
  const next = new Map<string, string[]>();
  for (const { from, to, runtime } of edges) {
    if (runtime) next.set(from, [...(next.get(from) ?? []), to]);
  }
  const found: string[][] = [];
  const state = new Map<string, "open" | "done">();
  const path: string[] = [];
  const visit = (file: string) => {
    state.set(file, "open");
    path.push(file);
    for (const to of next.get(file) ?? []) {
      if (state.get(to) === "open") found.push([...path.slice(path.indexOf(to)), to]);
      else if (state.get(to) === undefined) visit(to);
    }
    path.pop();
    state.set(file, "done");
  };
  for (const file of [...next.keys()].sort()) if (!state.has(file)) visit(file);
  return found;
}

const layers = readLayers(readFileSync(ARCHITECTURE, "utf8"));
const files = sourceFiles()
  .map((path) => relative(SRC, path))
  .sort();
const edges = edgesOf(files);

describe("core's layers, as docs/architecture.md draws them", () => {
  it("the table puts every folder of src on a layer, and names no folder that does not exist", () => {
    const folders = [...new Set(files.map(folderOf))].sort();
    expect(folders).toContain("port");
    expect([...layers.keys()].sort()).toStrictEqual(folders);
  });

  it("every import stays in its folder or goes to a lower layer, type-only imports included", () => {
    expect(edges.length).toBeGreaterThan(200);
    expect(breaks(edges, layers)).toStrictEqual([]);
  });

  it("no source file reaches itself through runtime imports", () => {
    expect(edges.filter((edge) => edge.runtime).length).toBeGreaterThan(100);
    expect(cycles(edges)).toStrictEqual([]);
  });
});

describe("the layering scan itself", () => {
  it("reads every import form, and tells type-only ones from runtime ones", () => {
    const sample = [
      'import { a } from "./a.js";',
      'import type { B } from "../b/b.js";',
      'import {\n  type C,\n  d,\n} from "../c/c.js";',
      'export { e } from "./e.js";',
      'export type { F } from "../f/f.js";',
      'export * from "./g/index.js";',
      'import "./side-effect.js";',
      'type H = import("../h/h.js").H;',
      'const later = "not an import from here";',
    ].join("\n");
    expect(importsIn(sample)).toStrictEqual([
      { specifier: "./a.js", runtime: true },
      { specifier: "../b/b.js", runtime: false },
      { specifier: "../c/c.js", runtime: true },
      { specifier: "./e.js", runtime: true },
      { specifier: "../f/f.js", runtime: false },
      { specifier: "./g/index.js", runtime: true },
      { specifier: "./side-effect.js", runtime: true },
      { specifier: "../h/h.js", runtime: false },
    ]);
  });

  it("reads the layer table: names before the description, asides ignored", () => {
    const markdown = [
      "## The layers of core",
      "",
      "```",
      "3  *.ts — the entry points",
      "2  top/ (a, b/c)   side/",
      "1  base/ — shared/ pieces",
      "```",
      "## Next",
      "```\n9  elsewhere/\n```",
    ].join("\n");
    expect([...readLayers(markdown)]).toStrictEqual([
      ["*.ts", 3],
      ["top", 2],
      ["side", 2],
      ["base", 1],
    ]);
  });

  it("finds a sideways import, an upward one and a type-only one, and passes a downward one", () => {
    const table = new Map([
      ["low", 1],
      ["mid", 2],
      ["peer", 2],
      [ROOT, 3],
    ]);
    const found = breaks(
      [
        { from: join("mid", "a.ts"), to: join("low", "b.ts"), runtime: true },
        { from: join("mid", "a.ts"), to: join("peer", "c.ts"), runtime: true },
        { from: join("low", "b.ts"), to: join("mid", "a.ts"), runtime: false },
        { from: join("mid", "a.ts"), to: join("unlisted", "d.ts"), runtime: true },
        { from: "index.ts", to: join("mid", "a.ts"), runtime: true },
      ],
      table,
    );
    expect(found).toHaveLength(3);
    expect(found.join("\n")).toMatch(/peer[\s\S]*mid[\s\S]*unlisted/);
  });

  it("finds a runtime ring of three files, and not one closed only by a type import", () => {
    const ring = [
      { from: "a.ts", to: "b.ts", runtime: true },
      { from: "b.ts", to: "c.ts", runtime: true },
      { from: "c.ts", to: "a.ts", runtime: true },
    ];
    expect(cycles(ring)).toStrictEqual([["a.ts", "b.ts", "c.ts", "a.ts"]]);
    expect(
      cycles([...ring.slice(0, 2), { from: "c.ts", to: "a.ts", runtime: false }]),
    ).toStrictEqual([]);
  });
});
