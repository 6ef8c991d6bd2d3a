/**
 * Every entry of @runledger/core shows one example (its module header and
 * docs/api.md). The examples live here as files, so the compiler checks them
 * and this test runs them: each `console.log(x); // value` must log exactly
 * that value. A second test holds the header and docs/api.md to these files,
 * and a third keeps docs/api.md from showing code that is not one of them.
 */
import { mkdtempSync, readdirSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { afterEach, describe, expect, it, vi } from "vitest";

const repo = fileURLToPath(new URL("../../../", import.meta.url));
const EXAMPLES = {
  "@runledger/core": { file: "core", source: "index.ts" },
  "@runledger/core/commit-log": { file: "commit-log", source: "commit-log.ts" },
  "@runledger/core/datastore": { file: "datastore", source: "datastore.ts" },
  "@runledger/core/engine": { file: "engine", source: "engine.ts" },
  "@runledger/core/port": { file: "port", source: "port/index.ts" },
} as const;

const exampleText = (file: string) =>
  readFileSync(new URL(`./examples/${file}.ts`, import.meta.url), "utf8");

/** The values the example promises, in order: the first token of each `console.log(…); // …` comment. */
function promised(text: string): unknown[] {
  return [...text.matchAll(/console\.log\(.*\); \/\/ (\[[^\]]*\]|"[^"]*"|\S+)/g)].map((m) =>
    JSON.parse(m[1]!),
  );
}

/** The example inside a module header: the fenced block after `@example`, comment stars removed. */
function headerExample(source: string): string {
  const text = readFileSync(join(repo, "packages/core/src", source), "utf8");
  const header = text.slice(0, text.indexOf("*/"));
  const block = header.slice(header.indexOf("@example"));
  const lines = block.split("\n").map((line) => line.replace(/^ \* ?/, ""));
  const start = lines.findIndex((line) => line.startsWith("```ts"));
  const end = lines.indexOf("```", start + 1);
  return `${lines.slice(start + 1, end).join("\n")}\n`;
}

/** The first ```ts block under the `## \`entry\`` heading of docs/api.md. */
function apiExample(entry: string): string {
  const api = readFileSync(join(repo, "docs/api.md"), "utf8");
  const at = api.indexOf(`## \`${entry}\``);
  if (at === -1) return `docs/api.md has no section for ${entry}`;
  const start = api.indexOf("```ts\n", at) + "```ts\n".length;
  return api.slice(start, api.indexOf("```", start));
}

/**
 * The method examples: every other file of examples/, each shown in
 * docs/api.md after `<!-- example: NAME -->`.
 */
const ENTRY_FILES: readonly string[] = Object.values(EXAMPLES).map(({ file }) => file);
const METHODS = readdirSync(new URL("./examples/", import.meta.url))
  .filter((name) => name.endsWith(".ts"))
  .map((name) => name.slice(0, -".ts".length))
  .filter((name) => !ENTRY_FILES.includes(name));

/** The ```ts block right after `<!-- example: NAME -->` in docs/api.md. */
function methodExample(name: string): string {
  const api = readFileSync(join(repo, "docs/api.md"), "utf8");
  const at = api.indexOf(`<!-- example: ${name} -->`);
  if (at === -1) return `docs/api.md shows no example ${name}`;
  const start = api.indexOf("```ts\n", at) + "```ts\n".length;
  return api.slice(start, api.indexOf("```", start));
}

/** Runs an example in a temporary directory and returns what it logged. */
async function run(file: string): Promise<unknown[]> {
  const dir = mkdtempSync(join(tmpdir(), `runledger-example-${file}-`));
  const logged: unknown[] = [];
  vi.spyOn(console, "log").mockImplementation((value: unknown) => {
    logged.push(value);
  });
  const home = process.cwd();
  try {
    process.chdir(dir);
    await import(`./examples/${file}.ts`);
  } finally {
    process.chdir(home);
    rmSync(dir, { recursive: true, force: true });
  }
  return logged;
}

describe("the example of every method section", () => {
  afterEach(() => vi.restoreAllMocks());

  it("has at least one example", () => {
    expect(METHODS.length).toBeGreaterThan(0);
  });

  for (const name of METHODS) {
    it(`${name}: the example runs, logs what its comments say, and docs/api.md shows it verbatim`, async () => {
      const text = exampleText(name);
      const expected = promised(text);
      expect(expected.length).toBeGreaterThan(0);
      expect(await run(name)).toEqual(expected);
      expect(methodExample(name)).toBe(text);
    });
  }
});

describe("the code docs/api.md shows", () => {
  it("is these examples only: one marker a file, and no TypeScript block but theirs", () => {
    const api = readFileSync(join(repo, "docs/api.md"), "utf8");
    const markers = [...api.matchAll(/<!-- example: ([a-z0-9-]+) -->/g)].map((m) => m[1]!);
    expect([...markers].sort()).toEqual([...METHODS].sort());
    const blocks = api.match(/^```ts$/gm)?.length ?? 0;
    expect(blocks).toBe(markers.length + Object.keys(EXAMPLES).length);
  });
});

describe("the example of every entry", () => {
  const home = process.cwd();
  afterEach(() => {
    process.chdir(home);
    vi.restoreAllMocks();
  });

  for (const [entry, { file }] of Object.entries(EXAMPLES)) {
    it(`${entry}: the example runs and logs what its comments say`, async () => {
      const expected = promised(exampleText(file));
      expect(expected.length).toBeGreaterThan(0);
      expect(await run(file)).toEqual(expected);
    });

    it(`${entry}: its module header and docs/api.md show this example verbatim`, () => {
      const text = exampleText(file);
      expect(headerExample(EXAMPLES[entry as keyof typeof EXAMPLES].source)).toBe(text);
      expect(apiExample(entry)).toBe(text);
    });
  }
});
