/**
 * The turn queue (port/turn-queue.ts): operations one at a time in arrival
 * order; one given to an idle queue starts inside `run`, and one that
 * answers `Done` frees the queue at once.
 */
import { describe, expect, it } from "vitest";
import { Done, TurnQueue } from "../src/port/turn-queue.js";

/** A promise with its settle functions, to end an operation when the test says. */
function deferred<T = void>() {
  let resolve!: (value: T) => void;
  let reject!: (error: unknown) => void;
  const promise = new Promise<T>((yes, no) => {
    resolve = yes;
    reject = no;
  });
  return { promise, resolve, reject };
}

describe("the turn queue", () => {
  it("starts an operation given to an idle queue inside run", async () => {
    const queue = new TurnQueue();
    const log: string[] = [];
    const answer = queue.run(async () => {
      log.push("started");
      return 1;
    });
    log.push("run returned");
    expect(log).toStrictEqual(["started", "run returned"]);
    expect(await answer).toBe(1);
  });

  it("makes an operation queued from inside a running one, even synchronously, wait for it", async () => {
    const queue = new TurnQueue();
    const log: string[] = [];
    const first = deferred();
    let inner: Promise<void> | undefined;
    const outer = queue.run(() => {
      inner = queue.run(async () => {
        log.push("inner");
      });
      log.push("outer started");
      return first.promise;
    });
    expect(queue.size).toBe(2);
    await Promise.resolve();
    expect(log).toStrictEqual(["outer started"]);
    first.resolve();
    await outer;
    await inner;
    expect(log).toStrictEqual(["outer started", "inner"]);
    expect(queue.size).toBe(0);
  });

  it("is free again at once after an operation that answers Done", async () => {
    const queue = new TurnQueue();
    const answer = queue.run(() => new Done("done"));
    expect(queue.size).toBe(0);
    const log: string[] = [];
    void queue.run(async () => {
      log.push("next");
    });
    expect(log).toStrictEqual(["next"]);
    expect(await answer).toBe("done");
  });

  it("runs operations that answer Done behind a busy one in order, none inside another's call", async () => {
    const queue = new TurnQueue();
    const first = deferred();
    void queue.run(() => first.promise);
    const order: number[] = [];
    // Set by each operation, cleared by the first microtask after it: still set, the next started inside its call.
    let inCall = false;
    let nested = 0;
    const answers: Promise<number>[] = [];
    for (let i = 0; i < 10_000; i++) {
      answers.push(
        queue.run(() => {
          if (inCall) nested++;
          inCall = true;
          queueMicrotask(() => {
            inCall = false;
          });
          order.push(i);
          return new Done(i);
        }),
      );
    }
    expect(queue.size).toBe(10_001);
    first.resolve();
    expect(await Promise.all(answers)).toStrictEqual(order);
    expect(order).toStrictEqual([...Array(10_000).keys()]);
    expect(nested).toBe(0);
    expect(queue.size).toBe(0);
  });

  it("goes on after an operation that throws or rejects, each failure its caller's", async () => {
    const queue = new TurnQueue();
    const thrown = queue.run(() => {
      throw new Error("thrown");
    });
    const rejected = queue.run(() => Promise.reject(new Error("rejected")));
    const after = queue.run(async () => "after");
    await expect(thrown).rejects.toThrow("thrown");
    await expect(rejected).rejects.toThrow("rejected");
    expect(await after).toBe("after");
  });

  it("resolves drained once everything queued before it has finished", async () => {
    const queue = new TurnQueue();
    const log: string[] = [];
    const first = deferred();
    void queue.run(() => first.promise.then(() => void log.push("first")));
    const drained = queue.drained().then(() => void log.push("drained"));
    void queue.run(async () => void log.push("later"));
    await Promise.resolve();
    expect(log).toStrictEqual([]);
    first.resolve();
    await drained;
    expect(log[0]).toBe("first");
    expect(log).toContain("drained");
    expect(await new TurnQueue().drained()).toBeUndefined();
  });
});
