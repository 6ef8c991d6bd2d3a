/**
 * A unit's staging scope (commit-log/unit-scope.ts) on its own: its calls
 * take turns in call order, it stages nothing once confirmed or discarded,
 * and it gives the unit its turn back exactly once, even when the discard
 * fails. The scope's effect on a real log is proven by the conformance
 * suite's commit-log family; this pins the turn-taking it relies on.
 */
import { describe, expect, it } from "vitest";
import type { TypedChange } from "../src/changes/change.js";
import { stagingScope } from "../src/commit-log/unit-scope.js";
import { RunledgerError } from "../src/port/errors.js";

const CHANGE = { intent: "snapshot.put" } as unknown as TypedChange;

function recorder(options: { discardFails?: boolean } = {}) {
  const calls: string[] = [];
  let ends = 0;
  const scope = stagingScope(
    {
      stage: async () => {
        calls.push("stage:start");
        await new Promise((resolve) => setTimeout(resolve, 5));
        calls.push("stage:end");
      },
      confirm: () => calls.push("confirm"),
      discard: async () => {
        calls.push("discard");
        if (options.discardFails) throw new Error("disk gone");
      },
      ended: () => new RunledgerError("unit_closed", "the scope has ended"),
    },
    () => {
      ends++;
    },
  );
  return { scope, calls, ends: () => ends };
}

describe("a unit's staging scope", () => {
  it("runs its calls one at a time, in call order", async () => {
    const { scope, calls } = recorder();
    await Promise.all([scope.stage(CHANGE), scope.stage(CHANGE), scope.confirm()]);
    expect(calls).toStrictEqual([
      "stage:start",
      "stage:end",
      "stage:start",
      "stage:end",
      "confirm",
    ]);
  });

  it("refuses to stage after confirm with the unit's refusal, and ends once", async () => {
    const { scope, calls, ends } = recorder();
    await scope.confirm();
    await expect(scope.stage(CHANGE)).rejects.toMatchObject({ code: "unit_closed" });
    await scope.confirm();
    await scope.discard();
    expect(calls).toStrictEqual(["confirm"]);
    expect(ends()).toBe(1);
  });

  it("ends even when the discard fails, and passes the failure on", async () => {
    const { scope, ends } = recorder({ discardFails: true });
    await expect(scope.discard()).rejects.toThrow("disk gone");
    expect(ends()).toBe(1);
    await expect(scope.stage(CHANGE)).rejects.toMatchObject({ code: "unit_closed" });
  });
});
