/**
 * A savepoint on demand (`WriteScope.savepointOnDemand`, what an apply runs
 * in): its SAVEPOINT is sent only when the work asks for it with `guard()`,
 * and what its work leaves behind when it fails is decided by what it wrote.
 * Run against a transaction in memory that records what it is sent and
 * answers each statement with the rows it is told the statement changes.
 */
import { describe, expect, it } from "vitest";
import type { DriverTransaction, QueryResult } from "../src/port/driver.js";
import { RunledgerError } from "../src/port/errors.js";
import { Savepoints } from "../src/transaction/savepoints.js";
import { type TransactionState, WriteScope } from "../src/transaction/scope.js";
import { codeOf } from "./fixtures.js";

/**
 * A write transaction in memory: `changes` says how many rows each statement
 * changes (0 unless named); `deferrable` false stands for a server's (its
 * client learns late that the server ended a transaction).
 */
function recordingTransaction(changes: Record<string, number> = {}, deferrable = true) {
  const sent: string[] = [];
  const transaction: DriverTransaction = {
    active: true,
    async execute(sql): Promise<QueryResult> {
      sent.push(sql);
      return { rows: [], changes: changes[sql] ?? 0, lastInsertRowid: undefined };
    },
    async executeScript(sql) {
      sent.push(sql);
    },
    async commit() {
      sent.push("COMMIT");
    },
    async rollback() {
      sent.push("ROLLBACK");
    },
  };
  const state: TransactionState = {};
  const savepoints = new Savepoints(
    transaction,
    {
      ended: (failure) => {
        state.doomed ??= failure;
      },
      failed: (failure) => {
        throw failure;
      },
    },
    { deferrable },
  );
  return { sent, scope: new WriteScope(transaction, savepoints, state), state };
}

const boom = () => new RunledgerError("io_error", "the work failed");

describe("a savepoint on demand", () => {
  it("whose work writes one statement sends no SAVEPOINT and no RELEASE", async () => {
    const { sent, scope } = recordingTransaction({ "INSERT one": 1 });
    await scope.savepointOnDemand(async (tx) => {
      await tx.execute("SELECT head");
      await tx.execute("INSERT one");
    });
    expect(sent).toStrictEqual(["SELECT head", "INSERT one"]);
  });

  it("sends SAVEPOINT once at the first guard, and RELEASE when its work succeeds", async () => {
    const { sent, scope } = recordingTransaction({ "INSERT a": 1, "INSERT b": 1 });
    await scope.savepointOnDemand(async (tx) => {
      await tx.execute("SELECT head");
      await tx.guard();
      await tx.execute("INSERT a");
      await tx.guard();
      await tx.execute("INSERT b");
    });
    expect(sent).toStrictEqual([
      "SELECT head",
      "SAVEPOINT runledger_sp_1",
      "INSERT a",
      "INSERT b",
      "RELEASE runledger_sp_1",
    ]);
  });

  it("whose guarded work fails is rolled back to its savepoint, and the transaction goes on", async () => {
    const { sent, scope, state } = recordingTransaction({ "INSERT a": 1 });
    const code = await codeOf(
      scope.savepointOnDemand(async (tx) => {
        await tx.guard();
        await tx.execute("INSERT a");
        throw boom();
      }),
    );
    expect(code).toBe("io_error");
    expect(sent).toStrictEqual([
      "SAVEPOINT runledger_sp_1",
      "INSERT a",
      "ROLLBACK TO runledger_sp_1",
      "RELEASE runledger_sp_1",
    ]);
    expect(state.doomed).toBeUndefined();
    await scope.execute("INSERT after");
    expect(sent.at(-1)).toBe("INSERT after");
  });

  it("whose work fails before changing a row leaves the transaction going on, with nothing to undo", async () => {
    const { sent, scope, state } = recordingTransaction();
    const code = await codeOf(
      scope.savepointOnDemand(async (tx) => {
        // A statement that changed nothing: a stale guess, refused by its own WHERE.
        await tx.execute("INSERT guessed");
        throw boom();
      }),
    );
    expect(code).toBe("io_error");
    expect(sent).toStrictEqual(["INSERT guessed"]);
    expect(state.doomed).toBeUndefined();
  });

  it("whose work fails after an unguarded write dooms the transaction: it never commits half of the work", async () => {
    const { scope, state } = recordingTransaction({ "INSERT one": 1 });
    const failure = boom();
    const code = await codeOf(
      scope.savepointOnDemand(async (tx) => {
        await tx.execute("INSERT one");
        throw failure;
      }),
    );
    expect(code).toBe("io_error");
    expect(state.doomed).toBe(failure);
    await expect(scope.execute("INSERT after")).rejects.toBe(failure);
  });

  it("counts a write whose answer is not read (later) as a write", async () => {
    const { scope, state } = recordingTransaction();
    await codeOf(
      scope.savepointOnDemand(async (tx) => {
        await tx.execute("INSERT sent later", [], { later: true });
        throw boom();
      }),
    );
    expect(state.doomed).toBeDefined();
  });

  it("refuses a guard asked for after an unguarded write, as a bug (internal_error)", async () => {
    const { scope } = recordingTransaction({ "INSERT one": 1 });
    const code = await codeOf(
      scope.savepointOnDemand(async (tx) => {
        await tx.execute("INSERT one");
        await tx.guard();
      }),
    );
    expect(code).toBe("internal_error");
  });

  it("opens its own savepoint before one nested in it, so the nested one undoes into it", async () => {
    const { sent, scope } = recordingTransaction({ "INSERT inner": 1 });
    await scope.savepointOnDemand(async (tx) => {
      await tx.savepoint((inner) => inner.execute("INSERT inner"));
    });
    expect(sent).toStrictEqual([
      "SAVEPOINT runledger_sp_1",
      "SAVEPOINT runledger_sp_2",
      "INSERT inner",
      "RELEASE runledger_sp_2",
      "RELEASE runledger_sp_1",
    ]);
  });

  it("on a connection that learns late that a transaction ended (a server), is opened at once", async () => {
    const { sent, scope } = recordingTransaction({ "INSERT one": 1 }, false);
    await scope.savepointOnDemand(async (tx) => {
      expect(tx.guard()).toBeUndefined();
      await tx.execute("INSERT one");
    });
    expect(sent).toStrictEqual([
      "SAVEPOINT runledger_sp_1",
      "INSERT one",
      "RELEASE runledger_sp_1",
    ]);
  });

  it("on a scope that is not one, guard has nothing to do", async () => {
    const { sent, scope } = recordingTransaction();
    expect(scope.guard()).toBeUndefined();
    await scope.savepoint(async (tx) => {
      expect(tx.guard()).toBeUndefined();
    });
    expect(sent).toStrictEqual(["SAVEPOINT runledger_sp_1", "RELEASE runledger_sp_1"]);
  });
});
