import { describe, expect, it } from "vitest";
import { MAX_COMMIT_OPS, type StagingScope, type TypedChange } from "../src/commit-log.js";
import {
  bindUnit,
  CHANGE_BUILDERS,
  type ChangeHook,
  type RouteRecord,
  signalChange,
  stageTyped,
  typedStagingActive,
  withStagingScope,
} from "../src/datastore.js";

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

  it("stages a write through its scope, confirmed when the write returns and discarded when it throws", async () => {
    const v3 = hook(3);
    const events: string[] = [];
    const direct: unknown[] = [];
    let opened = 0;
    const unbind = bindUnit(v3.hook, {
      stage: async (changes) => void direct.push(changes),
      openScope: async (): Promise<StagingScope> => {
        const n = ++opened;
        return {
          stage: async () => void events.push(`stage ${n}`),
          confirm: async () => void events.push(`confirm ${n}`),
          discard: async () => void events.push(`discard ${n}`),
        };
      },
    });
    const run = { workflowId: "wf", runId: "r" };
    const build = () => CHANGE_BUILDERS.runCreate(run, new Uint8Array([1]));
    const committed = await withStagingScope(v3.hook, async () => {
      await stageTyped(v3.hook, build);
      return 7;
    });
    expect(committed).toBe(7);
    const failure = new Error("rolled back");
    await expect(
      withStagingScope(v3.hook, async () => {
        await stageTyped(v3.hook, build);
        throw failure;
      }),
    ).rejects.toBe(failure);
    // Outside a scoped write the stager is staged into directly.
    await stageTyped(v3.hook, build);
    unbind();
    expect(events).toEqual(["stage 1", "confirm 1", "stage 2", "discard 2"]);
    expect(direct).toHaveLength(1);
  });

  it("a scoped write on a hook with no unit bound opens no scope", async () => {
    const v2 = hook(2);
    expect(await withStagingScope(v2.hook, async () => "done")).toBe("done");
    const failure = new Error("rolled back");
    await expect(
      withStagingScope(v2.hook, async () => {
        throw failure;
      }),
    ).rejects.toBe(failure);
    expect(v2.records).toEqual([]);
  });

  it("splits per-key tombstones at MAX_COMMIT_OPS, in key order", () => {
    const keys = Array.from({ length: MAX_COMMIT_OPS + 1 }, (_, i) => `snapshots/${i}.json`);
    const changes = CHANGE_BUILDERS.snapshotDelete({ workflowId: "wf", runId: "r" }, keys);
    expect(changes.map((c) => c.ops.length)).toEqual([MAX_COMMIT_OPS, 1]);
    expect(changes.flatMap((c) => c.ops.map((op) => op.key))).toEqual(keys);
    expect(changes.every((c) => c.ops.every((op) => op.expect === "present"))).toBe(true);
  });
});
