/**
 * Writes to one thread made together land in one transaction (src/batch.ts),
 * each answered once it has committed, a failing one undone alone.
 */
import { RunStore } from "@runledger/core";
import { afterAll, describe, expect, it } from "vitest";
import { WriteBatch } from "../src/batch.js";
import { BACKENDS, tempDirectory } from "./support/backends.js";

describe.each(BACKENDS)("a write batch on $name", (backend) => {
  const directory = tempDirectory();
  afterAll(() => directory.remove());

  async function openRun(name: string) {
    const store = new RunStore({ driver: backend.driver() });
    const lease = await store.open(`${directory.path}/${name}.db`, {
      create: { workflowId: "w", runId: name },
    });
    let transactions = 0;
    const transact = lease.transact.bind(lease);
    // Counts the transactions the batch opens; each still runs on the real lease.
    lease.transact = ((fn: never, options?: never) => {
      transactions += 1;
      return transact(fn, options);
    }) as typeof lease.transact;
    return { store, lease, transactions: () => transactions };
  }

  it("lands writes made in one turn in one transaction, and answers each with its own result", async () => {
    const { store, lease, transactions } = await openRun("together");
    const batch = new WriteBatch(lease);
    const [a, b, c] = await Promise.all([
      batch.write((tx) => tx.journal.append({ kind: "a" })),
      batch.write((tx) => tx.journal.append({ kind: "b" })),
      batch.write((tx) => tx.journal.append({ kind: "c" })),
    ]);
    expect([a.sequence, b.sequence, c.sequence]).toStrictEqual([1, 2, 3]);
    expect(transactions()).toBe(1);
    // A write made after the batch was answered goes in a transaction of its own.
    await batch.write((tx) => tx.journal.append({ kind: "d" }));
    expect(transactions()).toBe(2);
    const kinds = await lease.read(async (r) =>
      (await r.journal.list()).map((event) => event.record.kind),
    );
    expect(kinds).toStrictEqual(["a", "b", "c", "d"]);
    await lease.release();
    await store.close();
  });

  it("undoes a write that fails alone: the others land, only its caller sees the failure", async () => {
    const { store, lease } = await openRun("one-fails");
    const batch = new WriteBatch(lease);
    const failing = batch.write(async (tx) => {
      await tx.journal.append({ kind: "undone" });
      throw new Error("this write fails after appending");
    });
    const landing = batch.write((tx) => tx.journal.append({ kind: "kept" }));
    await expect(failing).rejects.toThrow("this write fails after appending");
    expect((await landing).sequence).toBe(1);
    const kinds = await lease.read(async (r) =>
      (await r.journal.list()).map((event) => event.record.kind),
    );
    expect(kinds).toStrictEqual(["kept"]);
    await lease.release();
    await store.close();
  });

  it("answers no write before its transaction has committed, and all with the failure when it cannot", async () => {
    const { store, lease } = await openRun("released");
    const batch = new WriteBatch(lease);
    const first = batch.write((tx) => tx.journal.append({ kind: "a" }));
    const second = batch.write((tx) => tx.journal.append({ kind: "b" }));
    // Released before the batch's turn: its transaction cannot begin, so nothing was written.
    await lease.release();
    await expect(first).rejects.toMatchObject({ code: "lease_released" });
    await expect(second).rejects.toMatchObject({ code: "lease_released" });
    const again = await store.open(`${directory.path}/released.db`);
    expect(await again.read((r) => r.journal.list())).toStrictEqual([]);
    await again.release();
    await store.close();
  });
});
