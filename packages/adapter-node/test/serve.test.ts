/**
 * `runledger serve` over plain HTTP, no browser: the built CLI in a child
 * process, asked what the page asks. Where it listens, what each JSON route
 * answers, how it refuses what it does not serve, that a large file is
 * streamed rather than loaded, that a run written meanwhile shows its new
 * events, how a directory's runs are listed — and that no route writes a
 * byte of what it serves.
 */
import { createHash, randomBytes } from "node:crypto";
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { createServer } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { nodeDriver } from "@runledger/adapter-node";
import { RunStore } from "@runledger/core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { get, route } from "./support/http.js";
import { DETERMINISTIC, runledger, serving, snapshot } from "./support/serve.js";

/** Each case starts a server process; allow for a loaded machine. */
const SLOW = { timeout: 240_000 };
const BIG = 20 * 1024 * 1024;

let dir: string;
let demoDir: string;
let demoFile: string;
let filesDir: string;
let filesFile: string;
let bigDigest: string;

/** A new run with the given files, written through the library and closed. */
async function makeRun(file: string, runId: string, put: Record<string, string | Uint8Array>) {
  const store = new RunStore({ driver: nodeDriver() });
  const lease = await store.open(file, { create: { workflowId: "serve-test", runId } });
  await lease.transact((tx) => tx.workspace.apply({ put }));
  await lease.release();
  await store.close();
}

/** Whether a TCP connection to host:port is refused (nothing listens there). */
function refused(host: string, port: number): Promise<boolean> {
  return get(`http://${host}:${port}/`).then(
    () => false,
    (error: NodeJS.ErrnoException) => error.code === "ECONNREFUSED",
  );
}

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), "runledger-serve-"));
  demoDir = join(dir, "demo");
  demoFile = join(demoDir, "demo.db");
  expect(runledger(["demo", demoDir], DETERMINISTIC).code).toBe(0);
  filesDir = join(dir, "files");
  mkdirSync(filesDir);
  filesFile = join(filesDir, "files.db");
  const big = randomBytes(BIG);
  bigDigest = createHash("sha256").update(big).digest("hex");
  await makeRun(filesFile, "files", {
    "big.bin": big,
    "blob.bin": new Uint8Array([0, 1, 2, 0xff, 0x52, 0x4c]),
    "data.json": '{"b":[1,2],"a":"x"}',
    "notes/long.txt": "a line of plain text\n".repeat(8_000),
  });
}, SLOW.timeout);

afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe("where runledger serve listens", SLOW, () => {
  it("prints its URL on 127.0.0.1, is not reachable on another address, and exits 0 on SIGTERM", async () => {
    await serving([demoFile], async (server) => {
      const url = new URL(server.url);
      expect(url.hostname).toBe("127.0.0.1");
      expect((await get(server.url)).status).toBe(200);
      expect(await refused("127.0.0.2", Number(url.port))).toBe(true);
    });
  });

  it("--host listens on the address given instead (127.0.0.2 here), and no longer on 127.0.0.1", async () => {
    await serving([demoFile, "--host", "127.0.0.2"], async (server) => {
      const url = new URL(server.url);
      expect(url.hostname).toBe("127.0.0.2");
      expect((await get(server.url)).status).toBe(200);
      expect(await refused("127.0.0.1", Number(url.port))).toBe(true);
    });
  });

  it("--json prints where it listens as one JSON document", async () => {
    await serving([demoFile, "--json"], async (server) => {
      expect(JSON.parse(server.stdout())).toStrictEqual({
        url: server.url,
        host: "127.0.0.1",
        port: Number(new URL(server.url).port),
        mode: "file",
        path: demoFile,
        catalog: null,
      });
    });
  });
});

describe("the page", SLOW, () => {
  it("is served with every module it imports, and a policy that loads nothing from elsewhere", async () => {
    await serving([demoFile], async (server) => {
      const page = await get(server.url);
      expect(page.status).toBe(200);
      expect(page.headers["content-type"]).toBe("text/html; charset=utf-8");
      expect(page.headers["content-security-policy"]).toMatch(
        /default-src 'none'; script-src 'self'/,
      );
      const html = page.body.toString("utf8");
      expect(html).toContain('<script type="module" src="/assets/app.js"></script>');
      // Every module reachable from app.js, by its imports, is served as JavaScript.
      const pending = ["app.js"];
      const seen = new Set<string>();
      while (pending.length > 0) {
        const name = pending.pop()!;
        if (seen.has(name)) continue;
        seen.add(name);
        const module = await get(route(server.url, `/assets/${name}`));
        expect([name, module.status]).toStrictEqual([name, 200]);
        expect(module.headers["content-type"]).toBe("text/javascript; charset=utf-8");
        for (const imported of module.body.toString("utf8").matchAll(/from "\.\/([\w-]+\.js)"/g)) {
          pending.push(imported[1]!);
        }
      }
      expect(seen.size).toBeGreaterThanOrEqual(8);
      for (const linked of html.matchAll(/href="(\/assets\/[\w.-]+)"/g)) {
        expect((await get(route(server.url, linked[1]!))).status).toBe(200);
      }
      // Nothing on the page names another origin.
      expect(html).not.toMatch(/(src|href)="(https?:)?\/\//);
    });
  });
});

describe("the JSON routes", SLOW, () => {
  it("answer the run's status, stop reason, verify result and counts", async () => {
    await serving([demoFile], async (server) => {
      const source = (await get(route(server.url, "/api/source"))).json();
      expect(source).toMatchObject({ mode: "file", path: demoFile, catalog: null, skipped: [] });
      expect(source.runs).toHaveLength(1);
      expect(source.runs[0]).toMatchObject({
        key: "demo.db",
        status: "completed",
        lastSequence: 39,
      });
      const run = (await get(route(server.url, "/api/run", { run: "demo.db" }))).json();
      expect(run.run).toMatchObject({ workflowId: "demo-pipeline", runId: "demo-run-0001" });
      expect(run.run.status).toBe("completed");
      expect(run.run.stopReason).toStrictEqual({ event: 39 });
      expect(run.counts).toMatchObject({ events: 39, firstSequence: 1, lastSequence: 39 });
      const verify = (await get(route(server.url, "/api/verify", { run: "demo.db" }))).json();
      expect(verify).toMatchObject({ ok: true, problems: [], counts: { events: 39 } });
    });
  });

  it("page the journal forwards and backwards, by kind, saying whether more lie on either side", async () => {
    await serving([demoFile], async (server) => {
      const page = async (query: Record<string, string | number>) => {
        const answer = await get(route(server.url, "/api/journal", { run: "demo.db", ...query }));
        expect(answer.status).toBe(200);
        const { events, older, newer } = answer.json();
        return {
          sequences: events.map((event: { sequence: number }) => event.sequence),
          older,
          newer,
        };
      };
      const range = (from: number, to: number) =>
        Array.from({ length: to - from + 1 }, (_, i) => from + i);
      expect(await page({ limit: 10 })).toStrictEqual({
        sequences: range(1, 10),
        older: false,
        newer: true,
      });
      expect(await page({ after: 10, limit: 10 })).toStrictEqual({
        sequences: range(11, 20),
        older: true,
        newer: true,
      });
      expect(await page({ after: 30, limit: 10 })).toStrictEqual({
        sequences: range(31, 39),
        older: true,
        newer: false,
      });
      expect(await page({ before: Number.MAX_SAFE_INTEGER, limit: 5 })).toStrictEqual({
        sequences: range(35, 39),
        older: true,
        newer: false,
      });
      expect(await page({ before: 6, limit: 25 })).toStrictEqual({
        sequences: range(1, 5),
        older: false,
        newer: true,
      });
      expect((await page({})).sequences).toStrictEqual(range(1, 25));
      expect(await page({ kind: "run.completed" })).toStrictEqual({
        sequences: [39],
        older: false,
        newer: false,
      });
      expect(await page({ kind: "step", after: 36, limit: 1 })).toStrictEqual({
        sequences: [37],
        older: true,
        newer: true,
      });
      expect(await page({ kind: "nothing" })).toStrictEqual({
        sequences: [],
        older: false,
        newer: false,
      });
      const kinds = (await get(route(server.url, "/api/kinds", { run: "demo.db" }))).json();
      expect(kinds).toStrictEqual({
        kinds: [
          { kind: "step", count: 38 },
          { kind: "run.completed", count: 1 },
        ],
      });
    });
  });

  it("list the tree at an event's root, show a file's head, and diff two events", async () => {
    await serving([demoFile], async (server) => {
      const journal = (
        await get(route(server.url, "/api/journal", { run: "demo.db", limit: 4 }))
      ).json();
      const fourth = journal.events[3];
      const tree = (
        await get(
          route(server.url, "/api/tree", { run: "demo.db", root: fourth.rootId.slice(0, 12) }),
        )
      ).json();
      expect(tree.root).toBe(fourth.rootId);
      expect(tree.entries.map((entry: { name: string }) => entry.name)).toStrictEqual([
        "analysis",
        "inputs",
        "plan.json",
      ]);
      const inner = (
        await get(
          route(server.url, "/api/tree", { run: "demo.db", root: fourth.rootId, dir: "analysis" }),
        )
      ).json();
      expect(inner.entries).toMatchObject([
        { path: "analysis/doc-01.json", kind: "file", size: 61 },
      ]);
      const current = (await get(route(server.url, "/api/tree", { run: "demo.db" }))).json();
      expect(current.entries.map((entry: { name: string }) => entry.name)).toStrictEqual([
        "analysis",
        "inputs",
        "plan.json",
        "report.md",
      ]);
      const plan = (
        await get(route(server.url, "/api/file", { run: "demo.db", path: "plan.json" }))
      ).json();
      expect(plan).toMatchObject({ path: "plan.json", view: "json", truncated: false, size: 192 });
      expect(JSON.parse(plan.text).documents).toHaveLength(12);
      const report = (
        await get(route(server.url, "/api/file", { run: "demo.db", path: "report.md" }))
      ).json();
      expect(report.view).toBe("text");
      expect(report.text).toMatch(/^# Demo report\n/);
      const diff = (
        await get(route(server.url, "/api/diff", { run: "demo.db", from: 3, to: 4 }))
      ).json();
      expect(diff.from).toStrictEqual({ sequence: 3, root: journal.events[2].rootId });
      expect(diff.to).toStrictEqual({ sequence: 4, root: fourth.rootId });
      expect(
        diff.changes.map((change: { change: string; path: string }) => [
          change.change,
          change.path,
        ]),
      ).toStrictEqual([
        ["added", "analysis/doc-01.json"],
        ["removed", "tmp/doc-01.tokens"],
      ]);
      expect(diff.truncated).toBe(false);
      const whole = (
        await get(
          route(server.url, "/api/diff", {
            run: "demo.db",
            from: 1,
            to: fourth.rootId.slice(0, 10),
          }),
        )
      ).json();
      expect(whole.changes.map((change: { path: string }) => change.path)).toStrictEqual([
        "analysis/doc-01.json",
        "inputs/doc-01.txt",
      ]);
    });
  });

  it("show a large file's head only, and stream the whole of it as a download", async () => {
    await serving([filesFile], async (server) => {
      const file = (path: string) => get(route(server.url, "/api/file", { run: "files.db", path }));
      const big = await file("big.bin");
      // The answer carries 64 KiB read and a hex head, never the 20 MiB.
      expect(big.body.length).toBeLessThan(16 * 1024);
      expect(big.json()).toMatchObject({
        view: "binary",
        size: BIG,
        shown: 64 * 1024,
        truncated: true,
        digest: bigDigest,
      });
      expect(big.json().hex).toHaveLength(1024);
      const raw = await get(route(server.url, "/api/raw", { run: "files.db", path: "big.bin" }));
      expect(raw.status).toBe(200);
      expect(raw.headers["content-type"]).toBe("application/octet-stream");
      expect(raw.headers["content-length"]).toBe(String(BIG));
      expect(raw.headers["content-disposition"]).toBe("attachment; filename*=UTF-8''big.bin");
      expect(createHash("sha256").update(raw.body).digest("hex")).toBe(bigDigest);
      const long = (await file("notes/long.txt")).json();
      expect(long).toMatchObject({
        view: "text",
        shown: 64 * 1024,
        truncated: true,
        size: 21 * 8_000,
      });
      expect(long.text.startsWith("a line of plain text\n")).toBe(true);
      expect((await file("blob.bin")).json()).toMatchObject({
        view: "binary",
        hex: "000102ff524c",
        truncated: false,
      });
      expect((await file("data.json")).json()).toMatchObject({
        view: "json",
        text: '{"b":[1,2],"a":"x"}',
      });
    });
  });
});

describe("refusals", SLOW, () => {
  it("answer what the server does not serve with a JSON error code and a fitting status", async () => {
    await serving([demoFile], async (server) => {
      const cases: [string, Record<string, string | number>, number, string][] = [
        ["/api/nothing", {}, 404, "route_not_found"],
        ["/assets/%2e%2e/package.json", {}, 404, "route_not_found"],
        ["/assets/missing.js", {}, 404, "route_not_found"],
        ["/api/run", { run: "other.db" }, 404, "not_found"],
        ["/api/run", { run: "../demo/demo.db" }, 404, "not_found"],
        ["/api/run", {}, 400, "invalid_argument"],
        ["/api/file", { run: "demo.db", path: "nowhere.txt" }, 404, "path_not_found"],
        ["/api/raw", { run: "demo.db", path: "nowhere.txt" }, 404, "path_not_found"],
        ["/api/file", { run: "demo.db", path: "analysis" }, 400, "not_a_file"],
        ["/api/raw", { run: "demo.db", path: "analysis" }, 400, "not_a_file"],
        ["/api/tree", { run: "demo.db", dir: "plan.json" }, 400, "not_a_directory"],
        ["/api/file", { run: "demo.db", path: "/plan.json" }, 400, "invalid_path"],
        ["/api/tree", { run: "demo.db", root: "f".repeat(64) }, 404, "root_not_found"],
        ["/api/tree", { run: "demo.db", root: "ffffffff" }, 404, "root_not_found"],
        ["/api/tree", { run: "demo.db", root: "xyz" }, 400, "usage"],
        ["/api/diff", { run: "demo.db", from: 1, to: 99 }, 404, "root_not_found"],
        ["/api/diff", { run: "demo.db", from: 1 }, 400, "invalid_argument"],
        ["/api/journal", { run: "demo.db", limit: 0 }, 400, "invalid_argument"],
        ["/api/journal", { run: "demo.db", after: -1 }, 400, "invalid_argument"],
        ["/api/journal", { run: "demo.db", before: 0 }, 400, "invalid_argument"],
      ];
      for (const [path, query, status, code] of cases) {
        const answer = await get(route(server.url, path, query));
        const what = `${path} ${JSON.stringify(query)}`;
        expect([what, answer.status], answer.body.toString()).toStrictEqual([what, status]);
        expect(answer.headers["content-type"]).toBe("application/json; charset=utf-8");
        expect(answer.json().error.code, what).toBe(code);
        expect(answer.json().error.message, what).toEqual(expect.any(String));
      }
      const posted = await get(route(server.url, "/api/run", { run: "demo.db" }), {
        method: "POST",
      });
      expect([posted.status, posted.json().error.code, posted.headers.allow]).toStrictEqual([
        405,
        "method_not_allowed",
        "GET, HEAD",
      ]);
      for (const method of ["PUT", "DELETE", "PATCH"]) {
        expect((await get(server.url, { method })).status).toBe(405);
      }
      // A page elsewhere reaching 127.0.0.1 through a name of its own is refused.
      const rebound = await get(route(server.url, "/api/run", { run: "demo.db" }), {
        headers: { host: `attacker.example:${new URL(server.url).port}` },
      });
      expect([rebound.status, rebound.json().error.code]).toStrictEqual([403, "host_not_allowed"]);
      const local = await get(server.url, {
        headers: { host: `localhost:${new URL(server.url).port}` },
      });
      expect(local.status).toBe(200);
    });
  });

  it("at the start: no run at the path, a port in use, --catalog on a file, a catalog missing or no catalog, a port out of range", async () => {
    const missing = join(dir, "missing.db");
    const absent = runledger(["serve", missing, "--port", "0"]);
    expect([absent.code, absent.stderr]).toStrictEqual([
      1,
      expect.stringMatching(/^runledger: not_found: no run in /),
    ]);
    expect(() => readFileSync(missing)).toThrow();
    const taken = await new Promise<{ port: number; close: () => void }>((resolve) => {
      const holder = createServer().listen(0, "127.0.0.1", () => {
        const address = holder.address() as { port: number };
        resolve({ port: address.port, close: () => holder.close() });
      });
    });
    try {
      const busy = runledger(["serve", demoFile, "--port", String(taken.port)]);
      expect(busy.code).toBe(1);
      expect(busy.stderr).toMatch(
        new RegExp(`^runledger: address_in_use: port ${taken.port} on 127\\.0\\.0\\.1 is taken`),
      );
    } finally {
      taken.close();
    }
    const onFile = runledger([
      "serve",
      demoFile,
      "--catalog",
      join(dir, "runs.catalog"),
      "--port",
      "0",
    ]);
    expect([onFile.code, onFile.stderr]).toStrictEqual([
      2,
      expect.stringMatching(/^runledger: usage: --catalog/),
    ]);
    const noCatalog = join(dir, "nowhere.catalog");
    const withoutCatalog = runledger(["serve", demoDir, "--catalog", noCatalog, "--port", "0"]);
    expect([withoutCatalog.code, withoutCatalog.stderr]).toStrictEqual([
      1,
      expect.stringMatching(/^runledger: not_found: /),
    ]);
    expect(() => readFileSync(noCatalog)).toThrow();
    const before = snapshot(demoDir);
    const runAsCatalog = runledger(["serve", demoDir, "--catalog", demoFile, "--port", "0"]);
    expect([runAsCatalog.code, runAsCatalog.stderr]).toStrictEqual([
      1,
      expect.stringMatching(/^runledger: foreign_database: /),
    ]);
    expect(snapshot(demoDir)).toStrictEqual(before);
    const range = runledger(["serve", demoFile, "--port", "70000"]);
    expect([range.code, range.stderr]).toStrictEqual([
      2,
      expect.stringMatching(/^runledger: usage: .*from 0 to 65535/),
    ]);
  });
});

describe("never writes", SLOW, () => {
  it("the run's directory is byte-identical, with no side file, after every route was asked", async () => {
    const before = snapshot(demoDir);
    expect(Object.keys(before)).toStrictEqual(["demo.db"]);
    await serving([demoFile], async (server) => {
      const journal = (await get(route(server.url, "/api/journal", { run: "demo.db" }))).json();
      const asks = [
        ["/", {}],
        ["/api/source", {}],
        ["/api/run", { run: "demo.db" }],
        ["/api/verify", { run: "demo.db" }],
        ["/api/kinds", { run: "demo.db" }],
        ["/api/journal", { run: "demo.db", kind: "step", before: 30 }],
        ["/api/tree", { run: "demo.db", root: journal.events[5].rootId, dir: "inputs" }],
        ["/api/file", { run: "demo.db", path: "report.md" }],
        ["/api/raw", { run: "demo.db", path: "report.md" }],
        ["/api/diff", { run: "demo.db", from: 1, to: 39 }],
        ["/api/file", { run: "demo.db", path: "nowhere" }],
      ] as const;
      for (const [path, query] of asks) {
        await get(route(server.url, path, query));
        expect(snapshot(demoDir), path).toStrictEqual(before);
      }
    });
    expect(snapshot(demoDir)).toStrictEqual(before);
  });
});

describe("a run another process is writing", SLOW, () => {
  it("shows its new events and files on the next request", async () => {
    const home = mkdtempSync(join(dir, "live-"));
    const file = join(home, "live.db");
    const store = new RunStore({ driver: nodeDriver() });
    const lease = await store.open(file, { create: { workflowId: "live", runId: "live-1" } });
    try {
      await lease.transact((tx) => tx.workspace.apply({ put: { "state.json": '{"turn":1}' } }));
      await serving([file], async (server) => {
        const events = async () =>
          (await get(route(server.url, "/api/journal", { run: "live.db" }))).json().events as {
            sequence: number;
          }[];
        expect(await events()).toHaveLength(1);
        await lease.transact((tx) =>
          tx.workspace.apply(
            { put: { "state.json": '{"turn":2}', "log.txt": "two" } },
            { event: { kind: "turn", turn: 2 } },
          ),
        );
        expect((await events()).map((event) => event.sequence)).toStrictEqual([1, 2]);
        const run = (await get(route(server.url, "/api/run", { run: "live.db" }))).json();
        expect(run.run.status).toBe("running");
        const diff = (
          await get(route(server.url, "/api/diff", { run: "live.db", from: 1, to: 2 }))
        ).json();
        expect(
          diff.changes.map((change: { change: string; path: string }) => [
            change.change,
            change.path,
          ]),
        ).toStrictEqual([
          ["added", "log.txt"],
          ["modified", "state.json"],
        ]);
        const state = (
          await get(route(server.url, "/api/file", { run: "live.db", path: "state.json" }))
        ).json();
        expect(state.text).toBe('{"turn":2}');
      });
    } finally {
      await lease.release();
      await store.close();
    }
  });
});

describe("a directory of runs", SLOW, () => {
  it("is listed by opening each file there, skipping what is no run, and stays byte-identical", async () => {
    const home = mkdtempSync(join(dir, "scan-"));
    await makeRun(join(home, "a.db"), "a", { "a.txt": "a" });
    await makeRun(join(home, "b.db"), "b", { "b.txt": "b" });
    writeFileSync(join(home, "notes.txt"), "not a database, only words\n");
    const before = snapshot(home);
    await serving([home], async (server) => {
      const source = (await get(route(server.url, "/api/source"))).json();
      expect(source).toMatchObject({ mode: "directory", path: home, catalog: null });
      expect(
        source.runs.map((run: { key: string; runId: string }) => [run.key, run.runId]),
      ).toStrictEqual([
        ["a.db", "a"],
        ["b.db", "b"],
      ]);
      expect(source.skipped).toMatchObject([{ key: "notes.txt", code: "not_a_database" }]);
      const tree = (await get(route(server.url, "/api/tree", { run: "b.db" }))).json();
      expect(tree.entries.map((entry: { name: string }) => entry.name)).toStrictEqual(["b.txt"]);
      for (const key of ["../demo/demo.db", "missing.db", ".hidden", ""]) {
        const answer = await get(route(server.url, "/api/run", { run: key }));
        expect([key, answer.status, answer.json().error.code]).toStrictEqual([
          key,
          404,
          "not_found",
        ]);
      }
      const notRun = await get(route(server.url, "/api/run", { run: "notes.txt" }));
      expect([notRun.status, notRun.json().error.code]).toStrictEqual([422, "not_a_database"]);
    });
    expect(snapshot(home)).toStrictEqual(before);
  });

  it("with --catalog, is listed by the catalog (the runs that lie in the directory), which stays byte-identical", async () => {
    const home = mkdtempSync(join(dir, "catalog-"));
    const runsDir = join(home, "runs");
    mkdirSync(runsDir);
    const catalog = join(runsDir, "runs.catalog");
    const store = new RunStore({ driver: nodeDriver(), catalog });
    for (const [path, runId] of [
      [join(runsDir, "one.db"), "one"],
      [join(runsDir, "two.db"), "two"],
      [join(home, "elsewhere.db"), "elsewhere"],
    ] as const) {
      const lease = await store.open(path, { create: { workflowId: "catalogued", runId } });
      await lease.transact((tx) => tx.journal.append({ kind: "started" }));
      await lease.release();
    }
    await store.close();
    const before = snapshot(runsDir);
    await serving([runsDir, "--catalog", catalog], async (server) => {
      const source = (await get(route(server.url, "/api/source"))).json();
      expect(source).toMatchObject({ mode: "directory", catalog });
      expect(source.runs.map((run: { key: string }) => run.key).sort()).toStrictEqual([
        "one.db",
        "two.db",
      ]);
      const run = (await get(route(server.url, "/api/run", { run: "two.db" }))).json();
      expect(run.run.runId).toBe("two");
      const outside = await get(route(server.url, "/api/run", { run: "../elsewhere.db" }));
      expect([outside.status, outside.json().error.code]).toStrictEqual([404, "not_found"]);
    });
    expect(snapshot(runsDir)).toStrictEqual(before);
  });
});
