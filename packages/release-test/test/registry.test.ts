/**
 * The release, tried as a maintainer and then as a new user would: the five
 * packages are built from this checkout and published with `npm run release`
 * to a private Verdaccio registry; fresh projects in temp directories then
 * `npm install` one adapter from it (only @runledger/* comes from that
 * registry; everything else from npm's configured one), run the READMEs'
 * examples and the CLI, open one adapter's file through the other, and compile
 * TypeScript consumers under the strictest settings a user might have.
 */
import { spawn } from "node:child_process";
import {
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  writeFileSync,
} from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ok, userEnv } from "./npm.js";
import { type Registry, startRegistry } from "./registry.js";

const repo = fileURLToPath(new URL("../../..", import.meta.url));
const PUBLISHED = ["core", "adapter-node", "adapter-libsql", "conformance", "langgraph"] as const;
const manifest = (dir: string) =>
  JSON.parse(readFileSync(join(repo, "packages", dir, "package.json"), "utf8")) as {
    name: string;
    version: string;
  };
const tsc = join(repo, "node_modules", "typescript", "bin", "tsc");

/** The ```js block under a README's "## Example" heading, verbatim. */
function readmeExample(dir: string): string {
  const text = readFileSync(join(repo, "packages", dir, "README.md"), "utf8");
  const found = /## Example\n\n```js\n([\s\S]*?)```/.exec(text);
  if (found?.[1] === undefined)
    throw new Error(`packages/${dir}/README.md has no ## Example js block`);
  return found[1];
}

/** Every installed copy of a package under a project's node_modules. */
function copiesOf(project: string, name: string): string[] {
  const found: string[] = [];
  const walk = (modules: string) => {
    if (!existsSync(modules)) return;
    for (const entry of readdirSync(modules)) {
      const scoped = entry.startsWith("@");
      const names = scoped
        ? readdirSync(join(modules, entry)).map((n) => `${entry}/${n}`)
        : [entry];
      for (const child of names) {
        const dir = join(modules, child);
        if (child === name && existsSync(join(dir, "package.json"))) found.push(dir);
        walk(join(dir, "node_modules"));
      }
    }
  };
  walk(join(project, "node_modules"));
  return found;
}

const timings: Record<string, number> = {};
let work: string;
let registry: Registry;

/** A fresh application directory whose @runledger/* packages come from the test registry only. */
function project(name: string): string {
  const dir = join(work, name);
  mkdirSync(dir);
  writeFileSync(
    join(dir, "package.json"),
    `${JSON.stringify({ name, private: true, type: "module" })}\n`,
  );
  writeFileSync(join(dir, ".npmrc"), `@runledger:registry=${registry.url}\n`);
  return dir;
}

async function install(dir: string, ...specs: string[]): Promise<void> {
  const result = await ok("npm", ["install", "--no-audit", "--no-fund", ...specs], { cwd: dir });
  timings[`npm install ${specs.join(" ")}`] = result.ms;
}

beforeAll(async () => {
  work = mkdtempSync(join(tmpdir(), "runledger-release-"));
  registry = await startRegistry(work);
  const token = await registry.token();
  // The maintainer's npm config for the release: the test registry, and its token.
  const npmrc = join(work, "publish.npmrc");
  writeFileSync(npmrc, `registry=${registry.url}\n${registry.authKey}:_authToken=${token}\n`);
  const release = await ok("npm", ["run", "release", "--", "--no-git-tag"], {
    cwd: repo,
    env: userEnv({ npm_config_userconfig: npmrc, npm_config_registry: registry.url }),
  });
  timings["npm run release"] = release.ms;
});

afterAll(async () => {
  await registry?.stop();
  if (work !== undefined) rmSync(work, { recursive: true, force: true });
  console.log(
    `release test timings: ${Object.entries(timings)
      .map(([step, ms]) => `${step}: ${(ms / 1000).toFixed(1)} s`)
      .join("; ")}`,
  );
});

describe("the packages from a registry", () => {
  it("npm run release publishes the five packages at the checkout's versions", async () => {
    for (const dir of PUBLISHED) {
      const { name, version } = manifest(dir);
      const response = await fetch(`${registry.url}${name.replace("/", "%2f")}`);
      expect(response.status, name).toBe(200);
      const document = (await response.json()) as {
        versions: Record<string, { license?: string }>;
      };
      expect(Object.keys(document.versions), name).toEqual([version]);
      expect(document.versions[version]?.license, name).toBe("MIT");
    }
  });

  it("installing adapter-libsql alone brings core and runs the README example, without better-sqlite3 or a CLI parser", async () => {
    const app = project("app-libsql");
    await install(app, "@runledger/adapter-libsql");
    expect(copiesOf(app, "@runledger/core")).toHaveLength(1);
    expect(copiesOf(app, "better-sqlite3")).toEqual([]);
    expect(copiesOf(app, "commander")).toEqual([]);
    writeFileSync(join(app, "example.mjs"), readmeExample("adapter-libsql"));
    const example = await ok("node", ["example.mjs"], { cwd: app });
    expect(example.stdout).toBe("started planned\n");
    writeFileSync(join(app, "core-example.mjs"), readmeExample("core"));
    const stopped = await ok("node", ["core-example.mjs"], { cwd: app });
    expect(stopped.stdout).toBe("completed\n");
    // ESM-only, yet require() loads it on the Node versions the packages support (require(esm)).
    const required = await ok(
      "node",
      [
        "-e",
        "const m = require('@runledger/adapter-libsql'); process.stdout.write(typeof m.libsqlDriver)",
      ],
      { cwd: app },
    );
    expect(required.stdout).toBe("function");
  });

  describe("an application on adapter-node", () => {
    let app: string;
    beforeAll(async () => {
      app = project("app-node");
      await install(app, "@runledger/adapter-node");
    });

    it("installs without the CLI's parser, and `npx runledger demo` runs a workflow to completion", async () => {
      expect(copiesOf(app, "commander")).toEqual([]);
      expect(copiesOf(app, "cli-progress")).toEqual([]);
      const demo = await ok("npx", ["runledger", "demo", "demo-run", "--json"], { cwd: app });
      const summary = JSON.parse(demo.stdout) as { run: { status: string }; driver: string };
      expect(summary.driver).toBe("better-sqlite3");
      expect(summary.run.status).toBe("completed");
      const verify = await ok(
        "npx",
        ["runledger", "verify", join("demo-run", "demo.db"), "--json"],
        { cwd: app },
      );
      expect(JSON.parse(verify.stdout)).toMatchObject({ ok: true });
    });

    it("`runledger serve` serves its page from the installed package", async () => {
      const bin = join(app, "node_modules", ".bin", "runledger");
      const server = spawn(
        process.execPath,
        [bin, "serve", join("demo-run", "demo.db"), "--port", "0"],
        {
          cwd: app,
          env: userEnv(),
          stdio: ["ignore", "pipe", "pipe"],
        },
      );
      const exited = new Promise<number | null>((resolve) => server.on("exit", resolve));
      try {
        const url = await new Promise<string>((resolve, reject) => {
          let printed = "";
          server.stdout.setEncoding("utf8").on("data", (chunk: string) => {
            printed += chunk;
            const found = /^runledger serve: (http:\/\/\S+)$/m.exec(printed);
            if (found !== null) resolve(found[1]!);
          });
          exited.then((code) => reject(new Error(`runledger serve exited ${code}`)));
        });
        const page = await fetch(url);
        expect(page.status).toBe(200);
        expect(await page.text()).toContain('src="/assets/app.js"');
        for (const asset of ["app.js", "style.css", "timeline-view.js"]) {
          expect((await fetch(new URL(`/assets/${asset}`, url))).status).toBe(200);
        }
        const run = await fetch(new URL("/api/run?run=demo.db", url));
        expect(((await run.json()) as { run: { status: string } }).run.status).toBe("completed");
      } finally {
        server.kill("SIGTERM");
      }
      expect(await exited).toBe(0);
    });

    it("runs the README example", async () => {
      writeFileSync(join(app, "example.mjs"), readmeExample("adapter-node"));
      const example = await ok("node", ["example.mjs"], { cwd: app });
      expect(example.stdout).toBe("started planned\n");
    });

    it("with both adapters installed holds one copy of core, and each adapter opens the other's file", async () => {
      await install(app, "@runledger/adapter-libsql");
      expect(copiesOf(app, "@runledger/core")).toHaveLength(1);
      writeFileSync(
        join(app, "cross.mjs"),
        [
          'import { libsqlDriver } from "@runledger/adapter-libsql";',
          'import { nodeDriver } from "@runledger/adapter-node";',
          'import { RunStore } from "@runledger/core";',
          "const pairs = [[nodeDriver, libsqlDriver, 'n2l.db'], [libsqlDriver, nodeDriver, 'l2n.db']];",
          "for (const [write, read, file] of pairs) {",
          "  const writer = new RunStore({ driver: write() });",
          "  const run = await writer.open(file, { create: { workflowId: 'w', runId: file } });",
          "  await run.transact((tx) => tx.workspace.apply({ put: { 'a.txt': file } }, { event: { kind: 'wrote' } }));",
          "  await run.release();",
          "  await writer.close();",
          "  const reader = new RunStore({ driver: read() });",
          "  const again = await reader.open(file);",
          "  const text = new TextDecoder().decode(await again.read((r) => r.workspace.read('a.txt')));",
          "  const events = await again.read((r) => r.journal.list());",
          "  console.log([file, text, events.map((e) => e.record.kind).join(',')].join(' '));",
          "  await again.release();",
          "  await reader.close();",
          "}",
          "",
        ].join("\n"),
      );
      const cross = await ok("node", ["cross.mjs"], { cwd: app });
      expect(cross.stdout).toBe("n2l.db n2l.db wrote\nl2n.db l2n.db wrote\n");
    });

    it.each([
      ["nodenext", { module: "nodenext" }],
      ["preserve + bundler", { module: "preserve", moduleResolution: "bundler" }],
    ])(
      "a TypeScript consumer compiles under module %s with strict, exactOptionalPropertyTypes and no skipLibCheck",
      async (label, resolution) => {
        const dir = join(app, `ts-${label.replace(/\W+/g, "-")}`);
        mkdirSync(dir, { recursive: true });
        writeFileSync(
          join(dir, "consumer.ts"),
          [
            'import { libsqlDriver } from "@runledger/adapter-libsql";',
            'import { nodeDriver } from "@runledger/adapter-node";',
            'import { type JournalEvent, RunStore, RunledgerError, SCHEMA_V1_DIGEST } from "@runledger/core";',
            'import type { Driver } from "@runledger/core/port";',
            "export async function kinds(file: string, remote: boolean): Promise<string[]> {",
            "  const driver: Driver = remote ? libsqlDriver({ authToken: 't' }) : nodeDriver();",
            "  const store = new RunStore({ driver });",
            "  await using run = await store.open(file, { create: { workflowId: 'w', runId: 'r' } });",
            "  await run.transact((tx) => tx.journal.append({ kind: 'x' }, { key: 'k' }));",
            "  const events: JournalEvent[] = await run.read((r) => r.journal.list({ after: 0 }));",
            "  await store.close();",
            "  return events.map((e) => String(e.record.kind));",
            "}",
            "export const digest: string = SCHEMA_V1_DIGEST;",
            "export const isError = (e: unknown): e is RunledgerError => e instanceof RunledgerError;",
            "",
          ].join("\n"),
        );
        writeFileSync(
          join(dir, "tsconfig.json"),
          JSON.stringify({
            compilerOptions: {
              target: "es2022",
              lib: ["es2022", "esnext.disposable"],
              types: [],
              strict: true,
              exactOptionalPropertyTypes: true,
              skipLibCheck: false,
              noEmit: true,
              ...resolution,
            },
            files: ["consumer.ts"],
          }),
        );
        const compiled = await ok(process.execPath, [tsc, "-p", "tsconfig.json"], { cwd: dir });
        expect(compiled.stdout).toBe("");
      },
    );
  });

  it("a LangGraph application installs @runledger/langgraph with adapter-node and runs its README example", async () => {
    const app = project("app-langgraph");
    // LangGraph at the versions this checkout's own tests run the saver with (packages/langgraph).
    const { devDependencies } = JSON.parse(
      readFileSync(join(repo, "packages", "langgraph", "package.json"), "utf8"),
    ) as { devDependencies: Record<string, string> };
    await install(
      app,
      "@runledger/langgraph",
      "@runledger/core",
      "@runledger/adapter-node",
      `@langchain/langgraph@${devDependencies["@langchain/langgraph"]}`,
      `@langchain/core@${devDependencies["@langchain/core"]}`,
    );
    expect(copiesOf(app, "@runledger/core")).toHaveLength(1);
    expect(copiesOf(app, "@langchain/langgraph-checkpoint")).toHaveLength(1);
    writeFileSync(join(app, "example.mjs"), readmeExample("langgraph"));
    const example = await ok("node", ["example.mjs"], { cwd: app });
    expect(example.stdout).toBe("started planned shipped\norder-42\n");
    const verify = await ok(
      "npx",
      ["runledger", "verify", join("threads", "order-42.db"), "--json"],
      { cwd: app },
    );
    expect(JSON.parse(verify.stdout)).toMatchObject({ ok: true });
  });
});
