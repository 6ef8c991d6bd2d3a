import { describe, expect, it } from "vitest";
import {
  bindUnit,
  CHANGE_BUILDERS,
  type ChangeHook,
  MAX_COMMIT_OPS,
  type RouteRecord,
  signalChange,
  stageTyped,
  type TypedChange,
  typedStagingActive,
} from "../src/index.js";

function hook(format: 2 | 3) {
  const records: RouteRecord[] = [];
  const signals: string[] = [];
  const value: ChangeHook = {
    format,
    caller: "test",
    observer: { record: (entry) => records.push(entry) },
    signal: async (change) => {
      signals.push(change.path);
    },
  };
  return { hook: value, records, signals };
}

describe("the route", () => {
  it("never runs build on format 2, and refuses an unscoped format-3 write", async () => {
    const v2 = hook(2);
    let built = 0;
    await stageTyped(v2.hook, () => {
      built++;
      return [];
    });
    expect(built).toBe(0);
    expect(typedStagingActive(v2.hook)).toBe(false);
    await expect(stageTyped(hook(3).hook, () => [])).rejects.toMatchObject({
      code: "unscoped_write_refused",
    });
  });

  it("skips a typed signal only while a stager is bound, and stages all changes at once", async () => {
    const v3 = hook(3);
    const staged: (TypedChange | readonly TypedChange[])[] = [];
    await signalChange(v3.hook, { kind: "write", path: "a" }, { typed: true });
    const unbind = bindUnit(v3.hook, { stage: async (changes) => void staged.push(changes) });
    await signalChange(v3.hook, { kind: "write", path: "b" }, { typed: true });
    await signalChange(v3.hook, { kind: "write", path: "c" });
    const run = { workflowId: "wf", runId: "r" };
    await stageTyped(v3.hook, () => CHANGE_BUILDERS.runCreate(run, new Uint8Array([1])));
    unbind();
    expect(v3.signals).toEqual(["a", "c"]);
    expect(staged).toHaveLength(1);
    expect(typedStagingActive(v3.hook)).toBe(false);
  });

  it("splits per-key tombstones at MAX_COMMIT_OPS, in key order", () => {
    const keys = Array.from({ length: MAX_COMMIT_OPS + 1 }, (_, i) => `snapshots/${i}.json`);
    const changes = CHANGE_BUILDERS.snapshotDelete({ workflowId: "wf", runId: "r" }, keys);
    expect(changes.map((c) => c.ops.length)).toEqual([MAX_COMMIT_OPS, 1]);
    expect(changes.flatMap((c) => c.ops.map((op) => op.key))).toEqual(keys);
    expect(changes.every((c) => c.ops.every((op) => op.expect === "present"))).toBe(true);
  });
});
