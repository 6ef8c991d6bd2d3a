/**
 * The skip summary reads what vitest collected: each skipped test counted
 * once, under the reason in its own title or, inside a skipped block, in the
 * block's title; tests that ran or were skipped for other reasons not at all.
 */
import { readdirSync, readFileSync, statSync } from "node:fs";
import { join, relative } from "node:path";
import { fileURLToPath } from "node:url";
import { describe, expect, it, type RunnerTestSuite } from "vitest";
import { meets, needs, skipSummary, type TaskTree } from "../src/requirements.js";

const test = (name: string, mode = "run"): TaskTree => ({ name, type: "test", mode });
const suite = (name: string, tasks: TaskTree[], mode = "run"): TaskTree => ({
  name,
  type: "suite",
  mode,
  tasks,
});

describe("skipSummary", () => {
  it("counts skipped tests by the needs named in their own or their block's title", () => {
    const tree = suite("runledger conformance: x", [
      test("runs"),
      test("a [skipped: needs walSharedMemory]", "skip"),
      test("b [skipped: needs walSharedMemory]", "skip"),
      suite(
        "family [skipped: needs files]",
        [test("c", "skip"), test("d", "skip"), test("e", "skip")],
        "skip",
      ),
      test("skipped by hand, no reason", "skip"),
    ]);
    expect(skipSummary(tree)).toBe(
      "5 conformance tests skipped — needs files: 3; needs walSharedMemory: 2",
    );
  });

  it("counts tests skipped with a reason under their needs and that reason", () => {
    const why = "a server has no query_only";
    const tree = suite("s", [
      test(`a [skipped: needs local — ${why}]`, "skip"),
      suite(`family [skipped: needs local — ${why}]`, [test("b", "skip")], "skip"),
      test("c [skipped: needs local]", "skip"),
    ]);
    expect(skipSummary(tree)).toBe(
      `3 conformance tests skipped — needs local — ${why}: 2; needs local: 1`,
    );
  });

  it("says nothing when no test was skipped for a need", () => {
    expect(skipSummary(suite("s", [test("a"), test("b", "skip")]))).toBeUndefined();
  });
});

describe("meets", () => {
  const base = { name: "x", driver: () => ({}) as never, location: () => "" };

  it("treats an undeclared capability as missing and a declared one as met", () => {
    expect(meets(base, "files")).toBe(false);
    expect(meets({ ...base, capabilities: { files: true } }, "files")).toBe(true);
  });

  it("needs a non-empty peers list for peers, and no remote for local", () => {
    expect(meets({ ...base, peers: [] }, "peers")).toBe(false);
    expect(meets({ ...base, peers: [{ name: "p", module: "m", exportName: "e" }] }, "peers")).toBe(
      true,
    );
    expect(meets(base, "local")).toBe(true);
    expect(meets({ ...base, capabilities: { remote: true } }, "local")).toBe(false);
  });
});

describe("needs", () => {
  const base = { name: "x", driver: () => ({}) as never, location: () => "" };
  const remote = { ...base, capabilities: { remote: true } };
  let ran = false;

  describe("registered", () => {
    needs(remote, "local")
      .because("a server has no query_only")
      .it("refuses a write in a read", () => expect.fail("a skipped test ran"));
    needs(remote, "local", "files").describe("a family", () => {
      it("reads a file", () => expect.fail("a test of a skipped block ran"));
    });
    needs(base, "local")
      .because("never shown")
      .it("runs where the need is met", () => {
        ran = true;
      });
  });

  it("registers an unmet test skipped, titled with its needs and reason; a met one runs as titled", ({
    task,
  }) => {
    const registered = task.suite?.tasks.find((t) => t.name === "registered") as RunnerTestSuite;
    expect(registered.tasks.map((t) => [t.name, t.mode])).toStrictEqual([
      ["refuses a write in a read [skipped: needs local — a server has no query_only]", "skip"],
      ["a family [skipped: needs local, files]", "skip"],
      ["runs where the need is met", "run"],
    ]);
    expect(ran).toBe(true);
  });

  it("refuses a reason the summary could not read back", () => {
    expect(() => needs(base, "local").because("see [1]")).toThrow(/may not contain "\]"/);
  });
});

describe("one skip mechanism", () => {
  const src = fileURLToPath(new URL("../src/", import.meta.url));
  const files = (directory: string): string[] =>
    readdirSync(directory).flatMap((name) => {
      const path = join(directory, name);
      return statSync(path).isDirectory() ? files(path) : name.endsWith(".ts") ? [path] : [];
    });

  it("leaves vitest's skips to requirements.ts: families skip only through fx.needs(...)", () => {
    const offenders = files(src)
      .filter((path) => relative(src, path) !== "requirements.ts")
      .flatMap((path) =>
        readFileSync(path, "utf8")
          .split("\n")
          .map((line, index) => ({ line, at: `${relative(src, path)}:${index + 1}` }))
          .filter(({ line }) => /\b(it|test|describe)\.(skip|skipIf|runIf)\b|\bskip\(/.test(line))
          .map(({ at, line }) => `${at}: ${line.trim()}`),
      );
    expect(offenders).toStrictEqual([]);
  });
});
