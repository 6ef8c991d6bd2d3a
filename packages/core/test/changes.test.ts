/**
 * Typed changes without a database: intents and where they may land, the
 * injective partition naming (property-tested), op and change checks, and
 * how changes split into batches.
 */
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { splitIntoBatches } from "../src/changes/batches.js";
import {
  CONFIG_KINDS,
  type ConfigKind,
  changeBatches,
  checkChange,
  configPartition,
  definitionPartition,
  INTENTS,
  isRunPartition,
  MAX_COMMIT_OPS,
  type PartitionOf,
  parsePartition,
  partitionName,
  put,
  renameDefinition,
  runPartition,
  tombstone,
  typedChange,
} from "../src/commit-log.js";
import { sha256Hex } from "../src/port/index.js";
import { refusal } from "./fixtures.js";

/** Components as adversarial as possible: dashes, escapes, separators, any Unicode. */
const component = fc.oneof(
  fc.string({
    unit: fc.constantFrom("-", "%", "2", "D", "a", "/", "\\", "\u0000", "é"),
    minLength: 1,
    maxLength: 8,
  }),
  fc.string({ unit: "binary", minLength: 1, maxLength: 12 }),
  fc.constantFrom("-", "--", "---", "a-", "-a", "a--b", "%2D", "%25", "run--x", "%"),
);
const configKind = fc.constantFrom<ConfigKind>(...CONFIG_KINDS);
const target: fc.Arbitrary<PartitionOf> = fc.oneof(
  fc.record({ kind: fc.constant("run" as const), workflowId: component, runId: component }),
  fc.record({ kind: fc.constant("config" as const), config: configKind, name: component }),
  fc.record({ kind: fc.constant("definition" as const), id: component }),
);

describe("partition naming", () => {
  it("formats the documented shapes and keeps ordinary names readable", () => {
    expect(runPartition("nightly-build", "r1")).toBe("run--nightly-build--r1");
    expect(configPartition("vault", "prod secrets")).toBe("config--vault--prod secrets");
    expect(definitionPartition("d-1")).toBe("definition--d-1");
    expect(runPartition("a-", "b")).toBe("run--a%2D--b");
    expect(runPartition("a", "-b")).toBe("run--a--%2Db");
    expect(runPartition("a--b", "c")).toBe("run--a%2D%2Db--c");
    expect(definitionPartition("50%/x")).toBe("definition--50%25%2Fx");
  });

  it("is injective: two different inputs never share a partition (property)", () => {
    fc.assert(
      fc.property(target, target, (a, b) => {
        const same = JSON.stringify(a) === JSON.stringify(b);
        expect(partitionName(a) === partitionName(b)).toBe(same);
      }),
      { numRuns: 5000 },
    );
  });

  it("parses every name back to exactly its parts (property)", () => {
    fc.assert(
      fc.property(target, (of) => {
        const name = partitionName(of);
        expect({ ...parsePartition(name) }).toEqual({ ...of });
        expect(name.startsWith("run--")).toBe(of.kind === "run");
        expect(isRunPartition(name)).toBe(of.kind === "run");
      }),
      { numRuns: 5000 },
    );
  });

  it("refuses non-canonical and malformed names", () => {
    for (const name of [
      "run--a",
      "run--a--b--c",
      "run--%41--b",
      "run--a---b",
      "run--%2--b",
      "config--other--x",
      "definition--",
      "definition",
      "unknown--x",
      "run--a-%2D--b",
    ]) {
      const error = refusal(() => parsePartition(name));
      expect(error.code, name).toBe("invalid_change");
      expect(error.details?.reason).toBe("invalid_partition");
    }
  });

  it("refuses empty, over-long and ill-formed components", () => {
    for (const bad of ["", "x".repeat(513), "a\uD800b", "\uDC00"]) {
      expect(refusal(() => definitionPartition(bad)).details?.reason).toBe("invalid_partition");
    }
    expect(() => definitionPartition("x".repeat(512))).not.toThrow();
  });
});

describe("typed changes", () => {
  it("builds a change for every intent on its own partition", () => {
    const op = [put("k", "v")];
    for (const intent of INTENTS) {
      const target = intent.startsWith("run")
        ? { workflowId: "w", runId: "r" }
        : intent.startsWith("auto-definition")
          ? { id: "d" }
          : { kind: "model" as const, name: "m" };
      // biome-ignore lint/suspicious/noExplicitAny: every intent with a fitting target
      const change = typedChange(intent as any, target as any, op);
      expect(change.intent).toBe(intent);
      expect(checkChange(change)).toStrictEqual(change);
    }
  });

  it("refuses an unknown intent", () => {
    const error = refusal(() =>
      checkChange({ intent: "run.explode", partition: "run--w--r", ops: [put("k", "v")] }),
    );
    expect(error.code).toBe("invalid_change");
    expect(error.details?.reason).toBe("unknown_intent");
  });

  it("refuses a partition of the wrong kind for the intent", () => {
    const cases: [string, string][] = [
      ["run.create", "config--model--m"],
      ["definition.create", "run--w--r"],
      ["evaluated-definition.save", "config--workflow--w"],
      ["evaluated-definition.delete", "config--vault--v"],
      ["auto-definition.save", "config--model--m"],
      ["run-snapshot.save", "definition--d"],
    ];
    for (const [intent, partition] of cases) {
      const error = refusal(() => checkChange({ intent, partition, ops: [put("k", "v")] }));
      expect(error.details?.reason, `${intent} on ${partition}`).toBe("wrong_partition");
    }
    expect(() =>
      checkChange({
        intent: "evaluated-definition.save",
        partition: "config--model--m",
        ops: [put("k", "v")],
      }),
    ).not.toThrow();
  });

  it("refuses no ops, bad ops, bad keys, bad expectations and a digest that does not match", () => {
    const base = { intent: "run.update", partition: "run--w--r" };
    const reasons: [unknown, string][] = [
      [[], "no_ops"],
      [[{ op: "move", key: "k" }], "invalid_op"],
      [[{ op: "put", key: "k", bytes: "text", sha256: sha256Hex("text") }], "invalid_op"],
      [[{ op: "tombstone", key: "" }], "invalid_key"],
      [[{ op: "tombstone", key: "a\uD800" }], "invalid_key"],
      [[{ op: "tombstone", key: "k", expect: "maybe" }], "invalid_expectation"],
      [[{ op: "tombstone", key: "k", expect: { sha256: "ABC" } }], "invalid_expectation"],
      [[{ ...put("k", "v"), sha256: sha256Hex("w") }], "digest_mismatch"],
    ];
    for (const [ops, reason] of reasons) {
      expect(refusal(() => checkChange({ ...base, ops })).details?.reason, reason).toBe(reason);
    }
    expect(refusal(() => checkChange(null)).details?.reason).toBe("not_a_change");
  });

  it("builds a rename as rename-to (expect absent) then rename-from (expect present)", () => {
    const [to, from] = renameDefinition({
      kind: "workflow",
      from: "old",
      to: "new",
      put: { key: "definition.yaml", content: "steps: []" },
    });
    expect(to.intent).toBe("definition.rename-to");
    expect(to.partition).toBe("config--workflow--new");
    expect(to.ops[0]).toMatchObject({ op: "put", key: "definition.yaml", expect: "absent" });
    expect(from.intent).toBe("definition.rename-from");
    expect(from.partition).toBe("config--workflow--old");
    expect(from.ops[0]).toStrictEqual(tombstone("definition.yaml", { expect: "present" }));
  });
});

describe("batches", () => {
  it("splits at MAX_COMMIT_OPS, keeping order", () => {
    expect(MAX_COMMIT_OPS).toBe(10_000);
    for (const [n, sizes] of [
      [9_999, [9_999]],
      [10_000, [10_000]],
      [10_001, [10_000, 1]],
      [20_001, [10_000, 10_000, 1]],
    ] as const) {
      const items = Array.from({ length: n }, (_, i) => i);
      const batches = splitIntoBatches(items);
      expect(batches.map((b) => b.length)).toStrictEqual(sizes);
      expect(batches.flat()).toStrictEqual(items);
    }
    const ops = Array.from({ length: 10_001 }, (_, i) => tombstone(`k${i}`));
    const change = typedChange("run.update", { workflowId: "w", runId: "r" }, ops);
    const parts = changeBatches(change);
    expect(parts.map((part) => [part.intent, part.partition, part.ops.length])).toStrictEqual([
      ["run.update", "run--w--r", 10_000],
      ["run.update", "run--w--r", 1],
    ]);
  });
});
