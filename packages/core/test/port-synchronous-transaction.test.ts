import { describe, expect, it } from "vitest";
import type { QueryResult } from "../src/port/driver.js";
import { isRunledgerError, RunledgerError } from "../src/port/errors.js";
import {
  type SynchronousSession,
  SynchronousTransactions,
  settled,
} from "../src/port/synchronous-transaction.js";

const NOTHING: QueryResult = { rows: [], changes: 0, lastInsertRowid: undefined };

/**
 * A synchronous connection in memory: it records what it runs and what went
 * through `settle`, keeps SQLite's autocommit state as BEGIN, COMMIT and
 * ROLLBACK move it, and fails the statements it is told to, once each.
 */
function fakeSession(
  options: { retriesBusy?: boolean; runsNow?: boolean; commitsNow?: boolean } = {},
) {
  const ran: string[] = [];
  const settles = { count: 0 };
  const failing = new Map<string, RunledgerError>();
  let inTransaction = false;
  const session: SynchronousSession = {
    runsNow: options.runsNow === true,
    commitsNow: options.commitsNow === true,
    run(sql) {
      ran.push(sql);
      const failure = failing.get(sql);
      if (failure !== undefined) {
        failing.delete(sql);
        throw failure;
      }
      if (sql.startsWith("BEGIN")) inTransaction = true;
      if (sql === "COMMIT" || sql === "ROLLBACK") inTransaction = false;
      return NOTHING;
    },
    script(sql) {
      ran.push(sql);
    },
    get inTransaction() {
      return inTransaction;
    },
    async settle(call) {
      settles.count++;
      try {
        return call();
      } catch (error) {
        if (!options.retriesBusy || !isRunledgerError(error, "busy")) throw error;
        return call();
      }
    },
  };
  return {
    session,
    ran,
    settles,
    failOnce: (sql: string, code: "busy" | "storage_error") =>
      failing.set(sql, new RunledgerError(code, `${sql} failed`)),
    /** SQLite ends the transaction by itself (after SQLITE_FULL, an I/O error). */
    endBySqlite: () => {
      inTransaction = false;
    },
  };
}

async function codeOf(promise: Promise<unknown>): Promise<string> {
  try {
    await promise;
  } catch (error) {
    if (error instanceof RunledgerError) return error.code;
    throw error;
  }
  throw new Error("expected a refusal");
}

describe("SynchronousTransactions", () => {
  it("begins with SQLite's BEGIN for each mode, on the connection's own handle", async () => {
    const fake = fakeSession();
    const transactions = new SynchronousTransactions(fake.session);
    for (const mode of ["immediate", "deferred"] as const) {
      const tx = await transactions.begin(mode);
      expect(tx.active).toBe(true);
      await tx.rollback();
    }
    expect(fake.ran).toStrictEqual(["BEGIN IMMEDIATE", "ROLLBACK", "BEGIN DEFERRED", "ROLLBACK"]);
  });

  it("refuses a second begin with transaction_active until the first ends", async () => {
    const fake = fakeSession();
    const transactions = new SynchronousTransactions(fake.session);
    const first = await transactions.begin("immediate");
    expect(await codeOf(transactions.begin("deferred"))).toBe("transaction_active");
    expect(first.active).toBe(true);
    await first.commit();
    const next = await transactions.begin("deferred");
    await next.rollback();
    expect(fake.ran).toStrictEqual(["BEGIN IMMEDIATE", "COMMIT", "BEGIN DEFERRED", "ROLLBACK"]);
  });

  it("leaves the connection free for a begin again after a BEGIN that failed", async () => {
    const fake = fakeSession();
    const transactions = new SynchronousTransactions(fake.session);
    fake.failOnce("BEGIN IMMEDIATE", "storage_error");
    expect(await codeOf(transactions.begin("immediate"))).toBe("storage_error");
    const tx = await transactions.begin("immediate");
    expect(tx.active).toBe(true);
  });

  it("runs statements, scripts, BEGIN and COMMIT through settle, and ROLLBACK at once", async () => {
    const fake = fakeSession();
    const transactions = new SynchronousTransactions(fake.session);
    const tx = await transactions.begin("immediate");
    expect(await tx.execute("INSERT 1", [1])).toBe(NOTHING);
    await tx.executeScript("SCRIPT");
    await tx.commit();
    expect(fake.ran).toStrictEqual(["BEGIN IMMEDIATE", "INSERT 1", "SCRIPT", "COMMIT"]);
    expect(fake.settles.count).toBe(4);
    const undone = await transactions.begin("immediate");
    await undone.rollback();
    expect(fake.settles.count, "BEGIN through settle, ROLLBACK not").toBe(5);
  });

  it("runs a COMMIT that failed busy again when the connection's settle retries it", async () => {
    const fake = fakeSession({ retriesBusy: true });
    const tx = await new SynchronousTransactions(fake.session).begin("immediate");
    fake.failOnce("COMMIT", "busy");
    await tx.commit();
    expect(fake.ran).toStrictEqual(["BEGIN IMMEDIATE", "COMMIT", "COMMIT"]);
    expect(tx.active).toBe(false);
  });

  it("keeps a transaction whose COMMIT failed open, for its owner to roll back", async () => {
    const fake = fakeSession();
    const transactions = new SynchronousTransactions(fake.session);
    const tx = await transactions.begin("immediate");
    fake.failOnce("COMMIT", "busy");
    expect(await codeOf(tx.commit())).toBe("busy");
    expect(tx.active).toBe(true);
    expect(await codeOf(transactions.begin("immediate"))).toBe("transaction_active");
    await tx.rollback();
    expect(fake.ran).toStrictEqual(["BEGIN IMMEDIATE", "COMMIT", "ROLLBACK"]);
  });

  it("is no longer active once SQLite ended it, and then rolls back without a ROLLBACK", async () => {
    const fake = fakeSession();
    const transactions = new SynchronousTransactions(fake.session);
    const tx = await transactions.begin("immediate");
    fake.endBySqlite();
    expect(tx.active).toBe(false);
    await tx.rollback();
    expect(fake.ran).toStrictEqual(["BEGIN IMMEDIATE"]);
    const next = await transactions.begin("immediate");
    expect(next.active).toBe(true);
  });

  it("refuses every call after its commit or rollback with transaction_closed, as a rejection", async () => {
    for (const ending of ["commit", "rollback"] as const) {
      const fake = fakeSession();
      const tx = await new SynchronousTransactions(fake.session).begin("immediate");
      await tx[ending]();
      const calls = {
        execute: () => tx.execute("SELECT 1"),
        executeScript: () => tx.executeScript("SELECT 1;"),
        commit: () => tx.commit(),
        rollback: () => tx.rollback(),
      };
      for (const [name, call] of Object.entries(calls)) {
        let promise: Promise<unknown> | undefined;
        expect(() => {
          promise = call();
        }, `${name} after ${ending} does not throw`).not.toThrow();
        expect(await codeOf(promise!), `${name} after ${ending}`).toBe("transaction_closed");
      }
      expect(fake.ran).toHaveLength(2);
      expect(tx.active).toBe(false);
    }
  });
});

describe("SynchronousTransactions, where the session runs calls now", () => {
  it("begins, runs a statement and commits without settle, each answered before the call returns", () => {
    const fake = fakeSession({ runsNow: true, commitsNow: true });
    const transactions = new SynchronousTransactions(fake.session);
    const tx = transactions.beginNow("immediate");
    expect(tx.active).toBe(true);
    expect(tx.executeNow?.("INSERT 1", [1])).toBe(NOTHING);
    tx.commitNow?.();
    expect(tx.active).toBe(false);
    expect(fake.ran).toStrictEqual(["BEGIN IMMEDIATE", "INSERT 1", "COMMIT"]);
    expect(fake.settles.count).toBe(0);
    expect(transactions.beginNow("deferred").active, "the connection is free again").toBe(true);
  });

  it("throws what the promised calls reject with: transaction_active, a failed statement, transaction_closed", () => {
    const fake = fakeSession({ runsNow: true, commitsNow: true });
    const transactions = new SynchronousTransactions(fake.session);
    const tx = transactions.beginNow("immediate");
    expect(() => transactions.beginNow("immediate")).toThrow(
      expect.objectContaining({ code: "transaction_active" }),
    );
    fake.failOnce("INSERT 1", "storage_error");
    expect(() => tx.executeNow?.("INSERT 1", [])).toThrow(
      expect.objectContaining({ code: "storage_error" }),
    );
    fake.failOnce("COMMIT", "busy");
    expect(() => tx.commitNow?.()).toThrow(expect.objectContaining({ code: "busy" }));
    expect(tx.active, "a COMMIT that failed leaves it open").toBe(true);
    tx.commitNow?.();
    for (const call of [() => tx.executeNow?.("SELECT 1", []), () => tx.commitNow?.()]) {
      expect(call).toThrow(expect.objectContaining({ code: "transaction_closed" }));
    }
    expect(fake.ran).toStrictEqual(["BEGIN IMMEDIATE", "INSERT 1", "COMMIT", "COMMIT"]);
  });

  it("offers executeNow but not commitNow where COMMIT goes through settle (a turn owed between calls)", async () => {
    const fake = fakeSession({ runsNow: true });
    const tx = new SynchronousTransactions(fake.session).beginNow("immediate");
    expect(tx.executeNow?.("INSERT 1", [])).toBe(NOTHING);
    expect(tx.commitNow).toBeUndefined();
    await tx.commit();
    expect(fake.settles.count, "COMMIT only").toBe(1);
    expect(fake.ran).toStrictEqual(["BEGIN IMMEDIATE", "INSERT 1", "COMMIT"]);
  });

  it("offers neither executeNow nor commitNow where the session does not run calls now", async () => {
    const tx = await new SynchronousTransactions(fakeSession().session).begin("immediate");
    expect(tx.executeNow).toBeUndefined();
    expect(tx.commitNow).toBeUndefined();
  });
});

describe("settled", () => {
  it("answers a synchronous call's value, or its throw, as a settled promise", async () => {
    expect(await settled(() => 42)).toBe(42);
    const failure = new RunledgerError("busy", "locked");
    let promise: Promise<unknown> | undefined;
    expect(() => {
      promise = settled(() => {
        throw failure;
      });
    }).not.toThrow();
    await expect(promise).rejects.toBe(failure);
  });
});
