/**
 * The `runledger` CLI, run as users run it: `node bin/runledger.js …` in a
 * child process against temporary files. Golden outputs live in test/golden/;
 * after an intended change, regenerate them with UPDATE_GOLDEN=1.
 */
import { spawnSync } from "node:child_process";
import { createHash } from "node:crypto";
import {
  chmodSync,
  copyFileSync,
  existsSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  realpathSync,
  rmSync,
  writeFileSync,
} from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { nodeDriver } from "@runledger/adapter-node";
import { APPLICATION_ID, RunStore, SCHEMA_V1_DIGEST } from "@runledger/core";
import { WORKSPACE_ENCODING_V1 } from "@runledger/core/engine";
import Database from "better-sqlite3";
import { afterAll, beforeAll, describe, expect, it } from "vitest";

const packageDir = fileURLToPath(new URL("..", import.meta.url));
const bin = join(packageDir, "bin", "runledger.js");
const golden = (name: string) => join(packageDir, "test", "golden", name);
/** Each case starts several node processes; allow for a loaded machine. */
const SLOW = { timeout: 240_000 };
const DETERMINISTIC = { RUNLEDGER_DEMO_CLOCK: "fixed", RUNLEDGER_DEMO_IDS: "sequential" };

interface Result {
  readonly code: number | null;
  readonly stdout: Buffer;
  readonly text: string;
  readonly stderr: string;
}

function runledger(args: string[], env: Record<string, string> = {}): Result {
  const clean = { ...process.env };
  delete clean.RUNLEDGER_DEMO_CLOCK;
  delete clean.RUNLEDGER_DEMO_IDS;
  const result = spawnSync(process.execPath, [bin, ...args], {
    env: { ...clean, ...env },
    maxBuffer: 64 * 1024 * 1024,
  });
  return {
    code: result.status,
    stdout: result.stdout,
    text: result.stdout.toString("utf8"),
    stderr: result.stderr.toString("utf8"),
  };
}

// biome-ignore lint/suspicious/noExplicitAny: parsed CLI output, checked field by field below
function json(result: Result): Record<string, any> {
  return JSON.parse(result.text);
}

/** Compares with a golden file, or rewrites it under UPDATE_GOLDEN=1. */
function matchGolden(name: string, actual: string): void {
  if (process.env.UPDATE_GOLDEN === "1") writeFileSync(golden(name), actual);
  expect(actual).toBe(readFileSync(golden(name), "utf8"));
}

const sha256 = (path: string) => createHash("sha256").update(readFileSync(path)).digest("hex");
const sidecars = (path: string) =>
  ["-wal", "-shm", "-journal"].map((suffix) => `${path}${suffix}`).filter((p) => existsSync(p));

let dir: string;
let demoDir: string;
let demoFile: string;
let demoRun: Result;
/** Replaces this run's temporary paths so outputs compare across machines. */
const normalize = (text: string) => text.replaceAll(demoDir, "<DIR>");

beforeAll(() => {
  dir = mkdtempSync(join(tmpdir(), "runledger-cli-"));
  demoDir = join(dir, "demo");
  demoFile = join(demoDir, "demo.db");
  demoRun = runledger(["demo", demoDir, "--json"], DETERMINISTIC);
}, SLOW.timeout);

afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe("demo", SLOW, () => {
  it("runs the sample workflow and prints the summary as JSON (golden)", () => {
    expect(demoRun.stderr).toBe("");
    expect(demoRun.code).toBe(0);
    matchGolden("demo.golden.json", normalize(demoRun.text));
    const summary = json(demoRun);
    expect(summary.file).toBe(demoFile);
    expect(summary.steps).toBeGreaterThanOrEqual(20);
    expect(summary.verify.ok).toBe(true);
    expect(summary.run.status).toBe("completed");
    expect(summary.run.stopReason).toEqual({ event: summary.events });
  });

  it("prints the same run in plain text (golden), and the run file is byte-identical", () => {
    const other = join(dir, "demo-plain");
    const plain = runledger(["demo", other], DETERMINISTIC);
    expect(plain.code).toBe(0);
    matchGolden("demo.golden.txt", plain.text.replaceAll(other, "<DIR>"));
    expect(sha256(join(other, "demo.db"))).toBe(sha256(demoFile));
  });

  it("uses a new temporary directory by default and random ids without the env switches", () => {
    const result = runledger(["demo", "--json"]);
    expect(result.code).toBe(0);
    const summary = json(result);
    expect(summary.dir.startsWith(join(tmpdir(), "runledger-demo-"))).toBe(true);
    expect(summary.run.runId).toMatch(/^[0-9a-f-]{36}$/);
    expect(summary.currentRoot).toBe(json(demoRun).currentRoot);
    rmSync(summary.dir, { recursive: true, force: true });
  });

  it("refuses a directory that already holds a demo run, leaving it untouched", () => {
    const before = sha256(demoFile);
    const result = runledger(["demo", demoDir]);
    expect(result.code).toBe(1);
    expect(result.stderr).toMatch(/^runledger: invalid_argument: .*already exists/);
    expect(sha256(demoFile)).toBe(before);
  });
});

describe("inspect, log, ls, cat", SLOW, () => {
  it("inspect reports recognition, header, digest, run row, counts and current root", () => {
    const before = sha256(demoFile);
    const result = runledger(["inspect", demoFile, "--json"]);
    expect(result.code).toBe(0);
    const report = json(result);
    expect(report.bytes).toBe(readFileSync(demoFile).length);
    delete report.bytes;
    matchGolden("inspect.golden.json", `${normalize(JSON.stringify(report, null, 2))}\n`);
    expect(report).toMatchObject({
      recognition: "recognized",
      applicationId: APPLICATION_ID,
      userVersion: 1,
      schemaDigest: SCHEMA_V1_DIGEST,
      schemaDigestMatches: true,
      currentRoot: json(demoRun).currentRoot,
    });
    expect(report.counts.events).toBe(json(demoRun).events);
    // Inspecting a run never changes it.
    expect(sha256(demoFile)).toBe(before);
    expect(sidecars(demoFile)).toEqual([]);
    const plain = runledger(["inspect", demoFile]);
    expect(plain.code).toBe(0);
    expect(plain.text).toContain(`schema digest   ${SCHEMA_V1_DIGEST} (matches SCHEMA_V1_DIGEST)`);
    expect(plain.text).toContain('application_id  0x524C4447 ("RLDG")');
  });

  it("log lists events, with --after and --limit (golden)", () => {
    const all = runledger(["log", demoFile, "--json"]);
    expect(all.code).toBe(0);
    expect(json(all).events.map((e: { sequence: number }) => e.sequence)).toEqual(
      Array.from({ length: json(demoRun).events }, (_, i) => i + 1),
    );
    const page = runledger(["log", demoFile, "--after", "30", "--limit", "3", "--json"]);
    matchGolden("log.golden.json", normalize(page.text));
    expect(json(page).events.map((e: { sequence: number }) => e.sequence)).toEqual([31, 32, 33]);
    const plain = runledger(["log", demoFile, "--after", "37"]);
    expect(plain.text.trimEnd().split("\n")).toHaveLength(2);
    expect(runledger(["log", demoFile, "--after", "99", "--json"]).text).toBe(
      `{\n  "file": ${JSON.stringify(demoFile)},\n  "events": []\n}\n`,
    );
  });

  it("ls lists a directory at the current root or another (golden)", () => {
    const top = runledger(["ls", demoFile, "--json"]);
    expect(top.code).toBe(0);
    matchGolden("ls.golden.json", normalize(top.text));
    const analysis = runledger(["ls", demoFile, "analysis"]);
    expect(analysis.text.trimEnd().split("\n")).toHaveLength(12);
    // At the root event 2 recorded, only the plan and the first input exist.
    const second = json(runledger(["log", demoFile, "--after", "1", "--limit", "1", "--json"]))
      .events[0];
    const early = json(runledger(["ls", demoFile, "--root", second.rootId, "--json"]));
    expect(early.entries.map((e: { path: string }) => e.path)).toEqual(["inputs", "plan.json"]);
    const missing = runledger(["ls", demoFile, "nope"]);
    expect(missing.code).toBe(1);
    expect(missing.stderr).toMatch(/^runledger: path_not_found: /);
    // A root may be given by a unique prefix of 8 or more hex digits, as log prints 12.
    const byPrefix = json(
      runledger(["ls", demoFile, "--root", second.rootId.slice(0, 12), "--json"]),
    );
    expect(byPrefix.root).toBe(second.rootId);
    const badRoot = runledger(["ls", demoFile, "--root", "00", "--json"]);
    expect(badRoot.code).toBe(2);
    expect(json(badRoot).error.code).toBe("usage");
    const unknown = runledger(["ls", demoFile, "--root", "ffffffff0000", "--json"]);
    expect(unknown.code).toBe(1);
    expect(json(unknown).error.code).toBe("root_not_found");
  });

  it("diff lists the files added, removed and modified between two events, by sequence or by root", () => {
    const events = json(runledger(["log", demoFile, "--json"])).events as {
      sequence: number;
      rootId: string;
    }[];
    const second = events[1]!;
    const last = events.at(-1)!;
    const forward = json(runledger(["diff", demoFile, "1", String(second.sequence), "--json"]));
    expect(forward.changes.length).toBeGreaterThan(0);
    for (const change of forward.changes) {
      expect(change.change).toBe("added");
      expect(change.path.startsWith("inputs/")).toBe(true);
    }
    const back = json(runledger(["diff", demoFile, second.rootId.slice(0, 10), "1", "--json"]));
    expect(back.changes.map((c: { path: string }) => c.path)).toEqual(
      forward.changes.map((c: { path: string }) => c.path),
    );
    expect(back.changes.every((c: { change: string }) => c.change === "removed")).toBe(true);
    const plain = runledger(["diff", demoFile, "1", String(last.sequence)]);
    expect(plain.code).toBe(0);
    expect(plain.text).toMatch(/^A {2}inputs\//m);
    expect(json(runledger(["diff", demoFile, last.rootId, last.rootId, "--json"])).changes).toEqual(
      [],
    );
    const gone = runledger(["diff", demoFile, "999999", "1", "--json"]);
    expect(gone.code).toBe(1);
    expect(json(gone).error.code).toBe("root_not_found");
  });

  it("cat streams raw bytes, and --json carries them in base64", async () => {
    const file = join(dir, "big.db");
    // Over four chunks, and not a multiple of 3, to cross every boundary.
    const big = new Uint8Array(1024 * 1024 + 7).map((_, i) => (i * 31 + (i >> 10)) & 0xff);
    const store = new RunStore({ driver: nodeDriver() });
    const lease = await store.open(file, { create: { workflowId: "cat", runId: "cat-1" } });
    await lease.transact((tx) =>
      tx.workspace.apply({ put: { "data/big.bin": big, "a.txt": "hello\n" } }),
    );
    await lease.release();
    await store.close();

    const raw = runledger(["cat", file, "data/big.bin"]);
    expect(raw.code).toBe(0);
    expect(Buffer.compare(raw.stdout, Buffer.from(big))).toBe(0);
    const encoded = json(runledger(["cat", file, "data/big.bin", "--json"]));
    expect(encoded).toMatchObject({ path: "data/big.bin", size: big.length, encoding: "base64" });
    expect(Buffer.compare(Buffer.from(encoded.content, "base64"), Buffer.from(big))).toBe(0);
    expect(encoded.digest).toBe(createHash("sha256").update(big).digest("hex"));
    expect(runledger(["cat", file, "a.txt"]).text).toBe("hello\n");

    const report = runledger(["cat", demoFile, "report.md"]);
    expect(report.text).toMatch(/^# Demo report\n/);
    const directory = runledger(["cat", demoFile, "analysis"]);
    expect(directory.code).toBe(1);
    expect(directory.stdout.length).toBe(0);
    expect(directory.stderr).toMatch(/^runledger: not_a_file: /);
  });
});

describe("fork, gc, verify", SLOW, () => {
  it("fork starts a new run at the root of a journal event", () => {
    const target = join(dir, "fork.db");
    const result = runledger(["fork", demoFile, "20", target, "--run-id", "fork-1", "--json"]);
    expect(result.code).toBe(0);
    const fork = json(result);
    const event20 = json(runledger(["log", demoFile, "--after", "19", "--limit", "1", "--json"]))
      .events[0];
    expect(fork).toMatchObject({
      workflowId: "demo-pipeline",
      runId: "fork-1",
      from: { sequence: 20, rootId: event20.rootId },
      rootId: event20.rootId,
      sequence: 1,
    });
    const forked = json(runledger(["ls", target, "inputs", "--json"])).entries;
    const source = json(runledger(["ls", demoFile, "inputs", "--root", event20.rootId, "--json"]));
    expect(forked).toEqual(source.entries);
    expect(json(runledger(["log", target, "--json"])).events[0].record.kind).toBe("fork");
    expect(runledger(["verify", target]).code).toBe(0);
  });

  it("fork refuses a sequence the source does not hold, creating nothing", () => {
    const target = join(dir, "never.db");
    const result = runledger(["fork", demoFile, "999", target]);
    expect(result.code).toBe(1);
    expect(result.stderr).toMatch(/^runledger: invalid_argument: .*no journal event 999/);
    expect(existsSync(target)).toBe(false);
    expect(runledger(["fork", demoFile, "0", target]).code).toBe(2);
  });

  it("gc prunes history and collects what nothing retains; verify stays clean", () => {
    const file = join(dir, "gc.db");
    copyFileSync(demoFile, file);
    const first = runledger(["gc", file, "--prune-before", "30", "--json"]);
    expect(first.code).toBe(0);
    const report = json(first);
    expect(report.pruned).toBe(29);
    expect(report.collected.nodes).toBeGreaterThan(0);
    expect(report.remaining).toMatchObject({ events: 10, firstSequence: 30, lastSequence: 39 });
    expect(runledger(["verify", file]).code).toBe(0);
    const again = json(runledger(["gc", file, "--json"]));
    expect(again.collected).toEqual({ nodes: 0, files: 0, chunks: 0 });
    const refused = runledger(["gc", file, "--prune-before", "45"]);
    expect(refused.code).toBe(1);
    expect(refused.stderr).toMatch(/^runledger: invalid_argument: /);
  });

  it("verify exits 0 on a clean run and 1 with the problems on a damaged one", () => {
    const clean = runledger(["verify", demoFile, "--json"]);
    expect(clean.code).toBe(0);
    expect(json(clean)).toMatchObject({ ok: true, problems: [] });
    const file = join(dir, "damaged.db");
    copyFileSync(demoFile, file);
    const db = new Database(file);
    // One file's bytes, zeroed in place: the same length, so only re-hashing can tell.
    const changed = db
      .prepare(
        `UPDATE workspace_object SET data = zeroblob(length(data)) WHERE id = (
  SELECT id FROM workspace_object
  WHERE kind = 0 AND size > 0 AND substr(data, 1, 16) <> CAST('runledger/node/1' AS BLOB) LIMIT 1)`,
      )
      .run();
    expect(changed.changes).toBe(1);
    db.close();
    const damaged = runledger(["verify", file, "--json"]);
    expect(damaged.code).toBe(1);
    const report = json(damaged);
    expect(report.ok).toBe(false);
    expect(report.problems.length).toBeGreaterThan(0);
    expect(report.error.code).toBe("verify_failed");
    const plain = runledger(["verify", file]);
    expect(plain.code).toBe(1);
    expect(plain.text).toMatch(/^FAILED: /);
    expect(plain.stderr).toMatch(
      /^runledger: verify_failed: \d+ problem\(s\) found in \S+; restore it from a copy\n$/,
    );
  });

  it("log --json on a damaged event still prints one JSON document, and exits 1 with the code on stderr", () => {
    const file = join(dir, "damaged-record.db");
    copyFileSync(demoFile, file);
    const db = new Database(file);
    db.pragma("journal_mode = DELETE");
    const { record } = db.prepare("SELECT record FROM journal WHERE sequence = 20").get() as {
      record: string;
    };
    db.close();
    // One bit of the record's first byte flipped ("{" becomes "z"): its JSON is broken.
    const bytes = readFileSync(file);
    const at = bytes.indexOf(Buffer.from(record, "utf8"));
    expect(at).toBeGreaterThan(0);
    bytes[at] = bytes[at]! ^ 0x01;
    writeFileSync(file, bytes);

    const result = runledger(["log", file, "--json"]);
    expect(result.code).toBe(1);
    const parsed = json(result);
    expect(parsed.events.map((event: { sequence: number }) => event.sequence)).toEqual(
      Array.from({ length: 19 }, (_, i) => i + 1),
    );
    expect(parsed.error.code).toBe("corrupt");
    expect(parsed.error.message).toMatch(/journal event 20 is damaged/);
    expect(result.stderr).toMatch(/^runledger: corrupt: journal event 20 is damaged: /);
    // Nothing read yet: still one document.
    const first = runledger(["log", file, "--after", "19", "--json"]);
    expect(first.code).toBe(1);
    expect(json(first)).toMatchObject({ events: [], error: { code: "corrupt" } });
    // And verify finds it, exit 1.
    const verified = runledger(["verify", file, "--json"]);
    expect(verified.code).toBe(1);
    expect(json(verified).problems).toContain(
      "journal sequence 20 breaks CHECK (json_valid(record) AND json_type(record) = 'object')",
    );
  });
});

describe("log of long records", SLOW, () => {
  it("log cuts a long record at 200 characters and says how long it was; --full and --json print it whole", async () => {
    const file = join(dir, "long-records.db");
    const store = new RunStore({ driver: nodeDriver() });
    try {
      const lease = await store.open(file, { create: { workflowId: "cli", runId: "long" } });
      await lease.transact(async (tx) => {
        await tx.journal.append({ note: "short" });
        await tx.journal.append({ blob: "x".repeat(50_000) });
      });
      await lease.release();
    } finally {
      await store.close();
    }
    const plain = runledger(["log", file]).text.trimEnd().split("\n");
    expect(plain).toHaveLength(2);
    expect(plain[0]).toContain('{"note":"short"}');
    expect(plain[1]!.length).toBeLessThan(400);
    expect(plain[1]).toContain("… (50,011 characters; --full prints it)");
    const full = runledger(["log", file, "--full"]).text.trimEnd().split("\n");
    expect(full[1]).toContain(`"${"x".repeat(50_000)}"`);
    const asJson = json(runledger(["log", file, "--json"]));
    expect(asJson.events[1].record.blob).toHaveLength(50_000);
  });
});

describe("rm", SLOW, () => {
  it("deletes a run file and its side files, refuses what is not a run or is open elsewhere, and says so", () => {
    const target = join(dir, "rm.db");
    expect(runledger(["fork", demoFile, "2", target, "--run-id", "rm-1"]).code).toBe(0);
    // Another process holds the run open (its idle connection keeps the WAL index).
    const other = new Database(target);
    other.prepare("SELECT count(*) FROM journal").get();
    const busy = runledger(["rm", target, "--json"]);
    expect(busy.code).toBe(1);
    expect(json(busy).error.code).toBe("run_in_use");
    expect(existsSync(target)).toBe(true);
    other.close();
    const removed = runledger(["rm", target, "--json"]);
    expect(removed.code).toBe(0);
    expect(json(removed)).toStrictEqual({ file: target, removed: true });
    expect(sidecars(target)).toStrictEqual([]);
    expect(existsSync(target)).toBe(false);
    const again = runledger(["rm", target]);
    expect(again.code).toBe(1);
    expect(again.stderr).toContain("not_found");
    const junk = join(dir, "junk.db");
    writeFileSync(junk, "not a database");
    const refused = runledger(["rm", junk]);
    expect(refused.code).toBe(1);
    expect(refused.stderr).toContain("not_a_database");
    expect(readFileSync(junk, "utf8")).toBe("not a database");
  });
});

describe("runs", SLOW, () => {
  it("lists a catalog's runs newest first, filtered by workflow and status, and refuses a missing catalog or an unknown status", async () => {
    const home = mkdtempSync(join(dir, "runs-"));
    const catalog = join(home, "runs.catalog");
    let now = 1_000;
    const store = new RunStore({ driver: nodeDriver(), catalog, clock: () => now });
    for (const [runId, workflowId, status] of [
      ["r1", "orders", "running"],
      ["r2", "billing", "interrupted"],
      ["r3", "orders", "interrupted"],
    ] as const) {
      now += 1_000;
      const lease = await store.open(join(home, `${runId}.db`), { create: { workflowId, runId } });
      await lease.transact(async (tx) => {
        await tx.journal.append({ step: runId });
        if (status !== "running") await tx.run.stop({ status });
      });
      await lease.release();
    }
    await store.close();
    const all = runledger(["runs", catalog, "--json"]);
    expect(all.code, all.stderr).toBe(0);
    expect(json(all).catalog).toBe(catalog);
    expect(json(all).runs.map((run: { runId: string }) => run.runId)).toStrictEqual([
      "r3",
      "r2",
      "r1",
    ]);
    expect(json(all).runs[2]).toStrictEqual({
      location: join(realpathSync(home), "r1.db"),
      workflowId: "orders",
      runId: "r1",
      status: "running",
      stopReason: null,
      createdAt: 2_000,
      updatedAt: 2_000,
      lastSequence: 1,
    });
    const filtered = runledger([
      "runs",
      catalog,
      "--workflow",
      "orders",
      "--status",
      "interrupted,failed",
    ]);
    expect(filtered.code, filtered.stderr).toBe(0);
    expect(filtered.text.trim().split("\n")).toHaveLength(1);
    expect(filtered.text).toMatch(
      /^interrupted +1970-01-01T00:00:04\.000Z {2}orders\/r3 {2}seq 1 {2}\S+r3\.db\n$/,
    );
    expect(runledger(["runs", catalog, "--workflow", "none"]).text).toBe("no runs\n");
    const wrong = runledger(["runs", catalog, "--status", "done"]);
    expect(wrong.code).toBe(2);
    expect(wrong.stderr).toMatch(/status/);
    const missing = join(home, "missing.catalog");
    const absent = runledger(["runs", missing, "--json"]);
    expect([absent.code, json(absent).error.code]).toStrictEqual([1, "not_found"]);
    expect(existsSync(missing)).toBe(false);
    const run = join(home, "r1.db");
    const before = sha256(run);
    const refused = runledger(["runs", run]);
    expect(refused.code).toBe(1);
    expect(refused.stderr).toContain("foreign_database");
    expect(sha256(run)).toBe(before);
  });
});

describe("read commands never write", SLOW, () => {
  /** A copy of the demo run alone in a new directory, in WAL or rollback-journal mode. */
  const copyOfDemo = (mode: "wal" | "delete"): string => {
    const home = mkdtempSync(join(dir, `read-only-${mode}-`));
    const file = join(home, "run.db");
    copyFileSync(demoFile, file);
    if (mode === "delete") {
      const db = new Database(file);
      db.pragma("journal_mode = DELETE");
      db.close();
    }
    expect(readdirSync(home)).toEqual(["run.db"]);
    return file;
  };
  const reads = (file: string): string[][] => [
    ["inspect", file],
    ["verify", file],
    ["log", file],
    ["ls", file],
    ["cat", file, "report.md"],
    ["diff", file, "1", "2"],
  ];

  for (const mode of ["wal", "delete"] as const) {
    it(`inspect, verify, log, ls, cat and diff leave a ${mode}-mode run's bytes and directory as found`, () => {
      const file = copyOfDemo(mode);
      const home = join(file, "..");
      const before = sha256(file);
      for (const args of reads(file)) {
        const result = runledger(args);
        expect(result.code, `${args.join(" ")}: ${result.stderr}`).toBe(0);
        expect(sha256(file), args.join(" ")).toBe(before);
        expect(readdirSync(home), args.join(" ")).toEqual(["run.db"]);
      }
    });
  }

  it("they read a run whose file is mode 0444 in a read-only directory", () => {
    const file = copyOfDemo("wal");
    const home = join(file, "..");
    const before = sha256(file);
    chmodSync(file, 0o444);
    chmodSync(home, 0o555);
    try {
      for (const args of reads(file)) {
        const result = runledger(args);
        expect(result.code, `${args.join(" ")}: ${result.stderr}`).toBe(0);
      }
      expect(sha256(file)).toBe(before);
      expect(readdirSync(home)).toEqual(["run.db"]);
    } finally {
      chmodSync(home, 0o755);
      chmodSync(file, 0o644);
    }
  });
});

describe("refused files stay untouched", SLOW, () => {
  const cases: [string, (path: string) => void, string][] = [
    [
      "random bytes",
      (p) =>
        writeFileSync(
          p,
          Buffer.from(Array.from({ length: 8192 }, (_, i) => (i * 7919 + 13) & 0xff)),
        ),
      "not_a_database",
    ],
    ["an empty file", (p) => writeFileSync(p, ""), "not_found"],
    [
      "another program's database",
      (p) => {
        const db = new Database(p);
        db.exec("CREATE TABLE notes (body TEXT)");
        db.close();
      },
      "foreign_database",
    ],
    [
      "a creation that never finished",
      (p) => {
        const db = new Database(p);
        db.pragma(`application_id = ${APPLICATION_ID}`);
        db.exec("CREATE TABLE run (x)");
        db.close();
      },
      "partial_initialization",
    ],
    [
      "a run written in another workspace encoding",
      (p) => {
        copyFileSync(demoFile, p);
        const db = new Database(p);
        const recorded = db.prepare("SELECT encoding FROM runledger_identity").pluck().get();
        expect(recorded).toBe(WORKSPACE_ENCODING_V1);
        const other = WORKSPACE_ENCODING_V1.replace(/;cut=1\/\d+;/, ";cut=1/12;");
        db.prepare("UPDATE runledger_identity SET encoding = ?").run(other);
        db.pragma("journal_mode = DELETE");
        db.close();
      },
      "encoding_mismatch",
    ],
  ];
  const commands = (file: string): string[][] => [
    ["inspect", file],
    ["verify", file],
    ["log", file],
    ["ls", file],
    ["cat", file, "report.md"],
    ["gc", file, "--prune-before", "1"],
    ["fork", file, "1", join(dir, "fork-of-refused.db")],
  ];

  for (const [what, make, code] of cases) {
    // Every command on the first case; on the others, a reading and a writing one.
    const all = code === "not_a_database" || code === "encoding_mismatch";
    it(`${what}: ${all ? "every command exits" : "inspect and gc exit"} 1 with ${code}; the file is byte-identical`, () => {
      const file = join(dir, `refused-${code}.db`);
      make(file);
      const before = sha256(file);
      const chosen = all
        ? commands(file)
        : commands(file).filter(([c]) => c === "inspect" || c === "gc");
      for (const args of chosen) {
        const plain = runledger(args);
        expect(plain.code, args.join(" ")).toBe(1);
        expect(plain.stderr).toMatch(new RegExp(`^runledger: ${code}: `));
      }
      for (const args of chosen.slice(0, 1)) {
        const asJson = runledger([...args, "--json"]);
        expect(asJson.code).toBe(1);
        expect(json(asJson).error.code).toBe(code);
      }
      expect(sha256(file)).toBe(before);
      expect(sidecars(file)).toEqual([]);
      expect(existsSync(join(dir, "fork-of-refused.db"))).toBe(false);
    });
  }

  it("a missing file is not_found, and nothing is created", () => {
    const file = join(dir, "missing.db");
    const result = runledger(["inspect", file, "--json"]);
    expect(result.code).toBe(1);
    expect(json(result).error.code).toBe("not_found");
    expect(readdirSync(dir).filter((name) => name.startsWith("missing"))).toEqual([]);
  });
});

describe("command line", SLOW, () => {
  it("a wrong command line exits 2 with code usage and says where to look", () => {
    const unknown = runledger(["frobnicate"]);
    expect(unknown.code).toBe(2);
    expect(unknown.stderr).toBe(
      "runledger: usage: unknown command 'frobnicate'; `runledger help` lists the commands and their options\n",
    );
    const badLimit = runledger(["log", demoFile, "--limit", "-1", "--json"]);
    expect(badLimit.code).toBe(2);
    expect(json(badLimit).error.code).toBe("usage");
    expect(runledger(["inspect"]).code).toBe(2);
    // A misspelt option is named with the one meant, on one line.
    const misspelt = runledger(["inspect", demoFile, "--jsn"]);
    expect(misspelt.code).toBe(2);
    expect(misspelt.stderr).toMatch(
      /^runledger: usage: unknown option '--jsn' \(Did you mean --json\?\); [^\n]*\n$/,
    );
  });

  it("--json is one option of the program, taken anywhere on the line", () => {
    const after = runledger(["inspect", demoFile, "--json"]);
    const before = runledger(["--json", "inspect", demoFile]);
    expect(before.code).toBe(0);
    expect(before.stderr).toBe("");
    expect(before.text).toBe(after.text);
    expect(json(before).recognition).toBe("recognized");
    // Before, between and after a command's own options: the same document.
    const paged = [
      ["--json", "log", demoFile, "--after", "30", "--limit", "3"],
      ["log", demoFile, "--after", "30", "--json", "--limit", "3"],
      ["log", "--limit", "3", demoFile, "--after", "30", "--json"],
    ].map((args) => runledger(args));
    for (const result of paged) {
      expect(result.code).toBe(0);
      matchGolden("log.golden.json", normalize(result.text));
    }
    // A failure, and a wrong command line, answer in JSON whichever side --json is on.
    const missing = runledger(["--json", "inspect", join(dir, "nowhere.db")]);
    expect(missing.code).toBe(1);
    expect(json(missing).error.code).toBe("not_found");
    const unknown = runledger(["--json", "frobnicate"]);
    expect(unknown.code).toBe(2);
    expect(unknown.stderr).toBe("");
    expect(json(unknown).error).toMatchObject({ code: "usage" });
    // Without it, people's lines.
    expect(runledger(["inspect", demoFile]).text).toMatch(/^file {12}/);
  });

  it("help, help <command>, --help and --version exit 0; a bare runledger exits 2", () => {
    const help = runledger(["help"]);
    expect(help.code).toBe(0);
    expect(help.stderr).toBe("");
    matchGolden("help.golden.txt", help.text);
    for (const name of ["demo", "inspect", "verify", "log", "ls", "cat", "fork", "gc"]) {
      expect(help.text).toContain(`  ${name} `);
    }
    expect(runledger(["--help"]).text).toBe(help.text);
    const one = runledger(["help", "log"]);
    expect(one.code).toBe(0);
    expect(one.text).toMatch(/^Usage: runledger log \[options\] <file>/);
    // The global option is listed on every command's help.
    expect(one.text).toMatch(/Global Options:[\s\S]*--json/);
    expect(runledger(["log", "--help"]).text).toBe(one.text);
    expect(runledger(["log", "--help"]).code).toBe(0);
    const version = runledger(["--version"]);
    expect(version.code).toBe(0);
    const manifest = JSON.parse(readFileSync(join(packageDir, "package.json"), "utf8"));
    expect(version.text.trim()).toBe(manifest.version);
    // No command at all is a wrong command line: the help goes to stderr.
    const bare = runledger([]);
    expect(bare.code).toBe(2);
    expect(bare.text).toBe("");
    expect(bare.stderr).toBe(
      `${help.text}runledger: usage: name a command to run (listed above)\n`,
    );
    const bareJson = runledger(["--json"]);
    expect(bareJson.code).toBe(2);
    expect(json(bareJson).error.code).toBe("usage");
    const nothing = runledger(["help", "frobnicate"]);
    expect(nothing.code).toBe(2);
    expect(nothing.stderr).toMatch(/runledger: usage: name a command to run/);
  });
});

describe("failures speak to operators", SLOW, () => {
  /** A copy of the demo run whose -wal holds commits and whose -shm is gone. */
  const unrecoveredWal = (): string => {
    const home = mkdtempSync(join(dir, "wal-"));
    const writer = join(home, "writer.db");
    copyFileSync(demoFile, writer);
    const db = new Database(writer);
    db.pragma("wal_autocheckpoint = 0");
    db.exec("VACUUM"); // same content, every page written again into the -wal
    const copy = join(home, "copy.db");
    copyFileSync(writer, copy);
    copyFileSync(`${writer}-wal`, `${copy}-wal`);
    db.close();
    return copy;
  };

  it("each message names the file or path and what to run next, not a library call (golden)", () => {
    const empty = join(dir, "empty.db");
    writeFileSync(empty, "");
    const wal = unrecoveredWal();
    const walBefore = sha256(`${wal}-wal`);
    const cases: string[][] = [
      ["inspect", join(dir, "nowhere.db")],
      ["log", empty],
      ["ls", demoFile, "report.md"],
      ["cat", demoFile, "analysis"],
      ["cat", demoFile, "analysis/doc-99.json"],
      ["ls", demoFile, "--root", "f".repeat(64)],
      ["ls", demoFile, "/inputs"],
      ["inspect", wal],
    ];
    const lines: string[] = [];
    for (const args of cases) {
      const result = runledger(args);
      expect(result.code, args.join(" ")).toBe(1);
      expect(result.text).toBe("");
      expect(result.stderr).not.toMatch(/pass \{|readOnly|use read or stat|use list or walk|lease/);
      lines.push(`$ runledger ${args.join(" ")}`, result.stderr.trimEnd());
    }
    const shown = `${lines.join("\n")}\n`.replaceAll(dir, "<TMP>").replaceAll(/wal-\w+/g, "wal-X");
    matchGolden("errors.golden.txt", shown);
    // The same wording, and the library's code, with --json.
    const asJson = json(runledger(["--json", "cat", demoFile, "analysis"]));
    expect(asJson.error).toEqual({
      code: "not_a_file",
      message: `"analysis" is a directory, not a file: list it with \`runledger ls ${demoFile} analysis\``,
    });
    // The advice holds: the command it names works.
    expect(runledger(["ls", demoFile, "analysis"]).code).toBe(0);
    expect(runledger(["cat", demoFile, "report.md"]).code).toBe(0);
    // Refusing to read the unrecovered -wal changed nothing.
    expect(sha256(`${wal}-wal`)).toBe(walBefore);
    expect(existsSync(`${wal}-shm`)).toBe(false);
  });
});

describe("README", SLOW, () => {
  it("the library example runs as written", () => {
    const readme = readFileSync(join(packageDir, "..", "..", "README.md"), "utf8");
    const example = /```ts\n([\s\S]*?)```/.exec(readme)?.[1];
    expect(example).toBeDefined();
    const file = join(dir, "readme.db");
    const code = example!.replace('"./order-42.db"', JSON.stringify(file));
    const result = spawnSync(process.execPath, ["--input-type=module", "-e", code], {
      cwd: packageDir,
      encoding: "utf8",
    });
    expect(result.stderr).toBe("");
    expect(result.status).toBe(0);
    expect(result.stdout).toBe("# Plan\n\n");
    const report = json(runledger(["inspect", file, "--json"]));
    expect(report.run).toMatchObject({ status: "completed", stopReason: { event: 3 } });

    // Run again on the same file: the completed run takes nothing more.
    const again = spawnSync(process.execPath, ["--input-type=module", "-e", code], {
      cwd: packageDir,
      encoding: "utf8",
    });
    expect(again.status).not.toBe(0);
    expect(again.stderr).toMatch(/run_finished/);
    const after = json(runledger(["inspect", file, "--json"]));
    expect(after.run).toMatchObject({ status: "completed", stopReason: { event: 3 } });
    expect(after.counts.events).toBe(report.counts.events);
  });
});
