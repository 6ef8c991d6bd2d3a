/**
 * The skip summary reads what vitest collected: each skipped test counted
 * once, under the reason in its own title or, inside a skipped block, in the
 * block's title; tests that ran or were skipped for other reasons not at all.
 */
import { describe, expect, it } from "vitest";
import { meets, skipSummary, type TaskTree } from "../src/requirements.js";

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
