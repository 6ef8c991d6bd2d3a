/**
 * A transaction that commits before its call returns (owner.ts, `runBegun`):
 * on a driver whose calls complete now, a callback returning an operation
 * done already — a step's apply — is committed at once and answered `Done`;
 * anything else settles the ordinary way. Run against a connection in memory
 * that records what it is sent. Also `Operation.takeNow`, which it relies on.
 */
import { describe, expect, it } from "vitest";
import type { DriverConnection, DriverTransaction, QueryResult } from "../src/port/driver.js";
import { RunledgerError } from "../src/port/errors.js";
import { Done } from "../src/port/turn-queue.js";
import { NOT_NOW, type Operation } from "../src/transaction/operations.js";
import { type TransactionHost, writeTransaction } from "../src/transaction/owner.js";
import type { WriteScope } from "../src/transaction/scope.js";
import { codeOf } from "./fixtures.js";

const NO_ROWS: QueryResult = { rows: [], changes: 0, lastInsertRowid: undefined };
/** The statement the connection in memory refuses. */
const FAILING = "INSERT refused";

/** A connection in memory whose calls complete now; `refuseCommit` makes its COMMIT fail. */
function nowHost(refuseCommit?: RunledgerError) {
  const sent: string[] = [];
  let active = false;
  const transaction: DriverTransaction = {
    get active() {
      return active;
    },
    executeNow(sql) {
      sent.push(sql);
      if (sql === FAILING) throw new RunledgerError("constraint", "the statement was refused");
      return NO_ROWS;
    },
    async execute(sql) {
      return transaction.executeNow!(sql, []);
    },
    async executeScript(sql) {
      sent.push(sql);
    },
    async commit() {
      transaction.commitNow!();
    },
    commitNow() {
      sent.push("COMMIT");
      if (refuseCommit !== undefined) throw refuseCommit;
      active = false;
    },
    async rollback() {
      sent.push("ROLLBACK");
      active = false;
    },
  };
  const connection: DriverConnection = {
    async execute() {
      return NO_ROWS;
    },
    async executeScript() {},
    async begin(mode) {
      return connection.beginNow!(mode);
    },
    beginNow(mode) {
      sent.push(`BEGIN ${mode.toUpperCase()}`);
      active = true;
      return transaction;
    },
    async configure() {},
    async close() {},
  };
  const host: TransactionHost = {
    location: "memory",
    connection,
    readOnly: false,
    poison: (failure) => new RunledgerError("poisoned", "poisoned", { cause: failure }),
  };
  return { host, sent };
}

/** Core's own statement run now, handed out as the run API hands out a step's apply. */
function stepOn(tx: WriteScope, sql = "INSERT step"): Promise<QueryResult> {
  return tx.track(tx.executeNow(sql, []) ?? Promise.reject(new Error("not run now")));
}

describe("a transaction whose callback returns an operation done already", () => {
  it("is committed before its call returns, and answered Done with the operation's value", () => {
    const { host, sent } = nowHost();
    const answer = writeTransaction(host, (tx) => stepOn(tx), 1_000);
    expect(answer).toBeInstanceOf(Done);
    expect((answer as Done<QueryResult>).value).toBe(NO_ROWS);
    expect(sent).toStrictEqual(["BEGIN IMMEDIATE", "INSERT step", "COMMIT"]);
  });

  it("settles the ordinary way when the callback returns a promise of its own", async () => {
    const { host, sent } = nowHost();
    const answer = writeTransaction(host, async (tx) => stepOn(tx), 1_000);
    expect(answer).toBeInstanceOf(Promise);
    expect(sent).toStrictEqual(["BEGIN IMMEDIATE", "INSERT step"]);
    expect(await answer).toBe(NO_ROWS);
    expect(sent).toStrictEqual(["BEGIN IMMEDIATE", "INSERT step", "COMMIT"]);
  });

  it("settles the ordinary way when the operation returned is still running", async () => {
    const { host, sent } = nowHost();
    const answer = writeTransaction(host, (tx) => tx.track(Promise.resolve(7)), 1_000);
    expect(answer).toBeInstanceOf(Promise);
    expect(await answer).toBe(7);
    expect(sent).toStrictEqual(["BEGIN IMMEDIATE", "COMMIT"]);
  });

  it("is refused as escaped and rolled back when work it started beside it was never awaited", async () => {
    const { host, sent } = nowHost();
    const answer = writeTransaction(
      host,
      (tx) => {
        void stepOn(tx, "INSERT left behind");
        return stepOn(tx);
      },
      1_000,
    );
    expect(await codeOf(Promise.resolve(answer))).toBe("callback_escaped");
    expect(sent).toStrictEqual([
      "BEGIN IMMEDIATE",
      "INSERT left behind",
      "INSERT step",
      "ROLLBACK",
    ]);
  });

  it("is rolled back with its failure when the transaction was condemned", async () => {
    const { host, sent } = nowHost();
    const condemned = new RunledgerError("io_error", "condemned");
    const answer = writeTransaction(
      host,
      (tx) => {
        try {
          tx.doom(condemned);
        } catch {}
        return tx.track(1);
      },
      1_000,
    );
    expect(answer).toBeInstanceOf(Promise);
    await expect(answer).rejects.toBe(condemned);
    expect(sent).toStrictEqual(["BEGIN IMMEDIATE", "ROLLBACK"]);
  });

  it("whose COMMIT is refused is rolled back, and rejects with the refusal", async () => {
    const refused = new RunledgerError("constraint", "a deferred constraint failed at COMMIT");
    const { host, sent } = nowHost(refused);
    const answer = writeTransaction(host, (tx) => stepOn(tx), 1_000);
    expect(answer).toBeInstanceOf(Promise);
    await expect(answer).rejects.toBe(refused);
    expect(sent).toStrictEqual(["BEGIN IMMEDIATE", "INSERT step", "COMMIT", "ROLLBACK"]);
  });
});

describe("a statement on a scope whose driver answers now", () => {
  it("is done before execute returns: returned from the callback, its transaction commits now", () => {
    const { host, sent } = nowHost();
    const answer = writeTransaction(host, (tx) => tx.execute("INSERT row"), 1_000);
    expect(answer).toBeInstanceOf(Done);
    expect(sent).toStrictEqual(["BEGIN IMMEDIATE", "INSERT row", "COMMIT"]);
  });

  it("that fails rejects execute with its failure, and its transaction is rolled back", async () => {
    const { host, sent } = nowHost();
    const answer = writeTransaction(host, (tx) => tx.execute(FAILING), 1_000);
    expect(await codeOf(Promise.resolve(answer))).toBe("constraint");
    expect(sent).toStrictEqual(["BEGIN IMMEDIATE", FAILING, "ROLLBACK"]);
  });

  it("left unawaited beside the one returned is refused as escaped", async () => {
    const { host, sent } = nowHost();
    const answer = writeTransaction(
      host,
      (tx) => {
        void tx.execute("INSERT left behind");
        return tx.execute("INSERT row");
      },
      1_000,
    );
    expect(await codeOf(Promise.resolve(answer))).toBe("callback_escaped");
    expect(sent.at(-1)).toBe("ROLLBACK");
  });
});

describe("Operation.takeNow", () => {
  /**
   * A scope of a transaction begun in memory, its callback still running:
   * `end` returns from the callback, and answers the transaction's outcome.
   */
  function openScope(): Promise<{ tx: WriteScope; end: () => Promise<string> }> {
    const { host } = nowHost();
    return new Promise((opened) => {
      const answer = writeTransaction(
        host,
        (tx) =>
          new Promise<void>((returned) => {
            const end = () => {
              returned();
              return codeOf(outcome);
            };
            opened({ tx, end });
          }),
        1_000,
      );
      const outcome = Promise.resolve(answer);
    });
  }

  it("takes a fulfilled operation's value, and the operation counts as awaited", async () => {
    const { tx, end } = await openScope();
    const operation = tx.track(5) as Operation<number>;
    expect(tx.hasEscapedWork).toBe(true);
    expect(operation.takeNow()).toBe(5);
    expect(tx.hasEscapedWork).toBe(false);
    expect(await operation).toBe(5);
    expect(await end()).toBe("ok");
  });

  it("leaves a running or failed operation alone", async () => {
    const { tx, end } = await openScope();
    const running = tx.track(new Promise<number>(() => {})) as Operation<number>;
    expect(running.takeNow()).toBe(NOT_NOW);
    const failure = new Error("failed");
    const failed = tx.track(Promise.reject(failure)) as Operation<number>;
    await Promise.resolve();
    await Promise.resolve();
    expect(failed.takeNow()).toBe(NOT_NOW);
    await expect(failed).rejects.toBe(failure);
    expect(tx.hasEscapedWork).toBe(true);
    expect(await end()).toBe("callback_escaped");
  });
});
