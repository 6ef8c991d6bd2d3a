import { libsqlDriver } from "@runledger/adapter-libsql";
import type { DriverConnection } from "@runledger/core/port";
import { describe, expect, it } from "vitest";
import { BYTES_PER_TURN, STATEMENTS_PER_TURN } from "../src/finalizers.js";
import { COPIED_BLOB_BYTES, toDriverParams } from "../src/values.js";
import { temporaryDatabases } from "./support/temporary.js";

// libSQL frees each statement, and each closed connection, from a Node-API
// finalizer that runs only when the event loop turns (see src/finalizers.ts).
// These tests stand in for a caller that only ever awaits promises: without
// the adapter's turns, an immediate scheduled before the loop would never run
// during it. A local connection keeps the statements it prepares (local.ts):
// what counts is each statement prepared — a new SQL text, `distinct()` — and
// each close, not each call of a statement kept.
//
// The adapter keeps one count for all its connections, so a test that needs
// to know where the count stands first runs statements until it turns
// (`resetCount`): a turn starts the count again at zero.

const newDatabasePath = temporaryDatabases("turns");

/** Opens through a driver of its own, as every libsqlDriver() call makes one. */
function openConnection(path = newDatabasePath()): Promise<DriverConnection> {
  return libsqlDriver().open(path, { create: true, readOnly: false, busyTimeoutMs: 1000 });
}

/**
 * Runs `step` until an immediate scheduled before the first step has run, at
 * most `limit` times. Returns how many steps that took, or undefined when the
 * event loop never turned.
 */
async function stepsUntilTurn(
  limit: number,
  step: (index: number) => Promise<unknown>,
): Promise<number | undefined> {
  let turned = false;
  setImmediate(() => {
    turned = true;
  });
  for (let i = 0; i < limit; i++) {
    await step(i);
    if (turned) return i + 1;
  }
  return undefined;
}

/** A statement no connection of this file has prepared yet. */
let statements = 0;
const distinct = () => `SELECT ${++statements}`;

/** Prepares statements until the adapter turns the event loop, which sets its count back to zero. */
async function resetCount(connection: DriverConnection): Promise<void> {
  const steps = await stepsUntilTurn(STATEMENTS_PER_TURN, () => connection.execute(distinct()));
  expect(steps).toBeDefined();
}

describe("adapter-libsql lets statement finalizers run", () => {
  it("turns the event loop within every STATEMENTS_PER_TURN statements prepared outside a transaction", async () => {
    const connection = await openConnection();
    try {
      let turned = false;
      setImmediate(() => {
        turned = true;
      });
      for (let i = 0; i < STATEMENTS_PER_TURN && !turned; i++) await connection.execute(distinct());
      expect(turned).toBe(true);
    } finally {
      await connection.close();
    }
  });

  it("turns the event loop inside a long transaction too", async () => {
    const connection = await openConnection();
    try {
      const transaction = await connection.begin("immediate");
      let turned = false;
      setImmediate(() => {
        turned = true;
      });
      for (let i = 0; i < STATEMENTS_PER_TURN && !turned; i++) {
        await transaction.execute(distinct());
      }
      expect(turned).toBe(true);
      await transaction.commit();
    } finally {
      await connection.close();
    }
  });

  it("commits now while no turn is due; the transaction a turn falls due in commits now, and the next one's COMMIT takes the turn", async () => {
    const connection = await openConnection();
    try {
      await resetCount(connection);
      if (connection.beginNow === undefined) throw new Error("a local connection begins now");
      let turned = false;
      setImmediate(() => {
        turned = true;
      });
      // As core runs a step: begun and written now, committed now where offered.
      // Each transaction prepares one statement, so the STATEMENTS_PER_TURN-th makes a turn due.
      let transactions = 0;
      let committedNow = 0;
      while (!turned && transactions < 2 * STATEMENTS_PER_TURN) {
        const transaction = connection.beginNow("immediate");
        transactions++;
        transaction.executeNow?.(distinct(), []);
        if (transaction.commitNow === undefined) await transaction.commit();
        else {
          transaction.commitNow();
          committedNow++;
        }
      }
      expect(turned).toBe(true);
      expect(transactions).toBe(STATEMENTS_PER_TURN + 1);
      expect(committedNow).toBe(STATEMENTS_PER_TURN);
    } finally {
      await connection.close();
    }
  });

  it("does not turn it for a handful of statements", async () => {
    const connection = await openConnection();
    try {
      await resetCount(connection);
      let turned = false;
      setImmediate(() => {
        turned = true;
      });
      for (let i = 0; i < 8; i++) await connection.execute(distinct());
      expect(turned).toBe(false);
    } finally {
      await connection.close();
    }
  });

  it("turns it once per STATEMENTS_PER_TURN statements, not sooner", async () => {
    const connection = await openConnection();
    try {
      await resetCount(connection);
      const steps = await stepsUntilTurn(2 * STATEMENTS_PER_TURN, () =>
        connection.execute(distinct()),
      );
      expect(steps).toBe(STATEMENTS_PER_TURN);
    } finally {
      await connection.close();
    }
  });

  it("does not count a statement it keeps: a step's statements, run again and again, make no turn", async () => {
    const connection = await openConnection();
    try {
      await connection.execute("SELECT 1");
      await resetCount(connection);
      const steps = await stepsUntilTurn(4 * STATEMENTS_PER_TURN, () =>
        connection.execute("SELECT 1"),
      );
      expect(steps).toBeUndefined();
    } finally {
      await connection.close();
    }
  });
});

describe("adapter-libsql counts statements across its connections", () => {
  it("a counter shared across connections turns after STATEMENTS_PER_TURN statements spread over several connections", async () => {
    // Each connection comes from a driver of its own and runs a quarter of
    // the statements: a count kept per connection would never reach the limit.
    const connections = await Promise.all([1, 2, 3, 4].map(() => openConnection()));
    try {
      await resetCount(connections[0] as DriverConnection);
      const steps = await stepsUntilTurn(STATEMENTS_PER_TURN, (i) =>
        (connections[i % connections.length] as DriverConnection).execute(distinct()),
      );
      expect(steps).toBe(STATEMENTS_PER_TURN);
    } finally {
      for (const connection of connections) await connection.close();
    }
  });

  it("opening and closing connections in a promise-only loop lets the event loop turn", async () => {
    // A batch job opening one run after another: each connection runs only a
    // few statements before it closes.
    const path = newDatabasePath();
    const steps = await stepsUntilTurn(STATEMENTS_PER_TURN, async () => {
      const connection = await openConnection(path);
      await connection.execute("SELECT 1");
      await connection.close();
    });
    expect(steps).toBeDefined();
  });

  it("closing STATEMENTS_PER_TURN connections lets the event loop turn, a close counting like a statement", async () => {
    const path = newDatabasePath();
    const connections: DriverConnection[] = [];
    try {
      for (let i = 0; i < STATEMENTS_PER_TURN; i++) connections.push(await openConnection(path));
      await resetCount(connections[0] as DriverConnection);
      const steps = await stepsUntilTurn(STATEMENTS_PER_TURN, (i) =>
        (connections[i] as DriverConnection).close(),
      );
      expect(steps).toBe(STATEMENTS_PER_TURN);
    } finally {
      for (const connection of connections) await connection.close();
    }
  });
});

describe("adapter-libsql lets the blobs bound to statements go", () => {
  it("turns the event loop once BYTES_PER_TURN bytes were bound, before STATEMENTS_PER_TURN statements", async () => {
    const connection = await openConnection();
    try {
      await resetCount(connection);
      const chunk = new Uint8Array(256 * 1024);
      const needed = Math.ceil(BYTES_PER_TURN / chunk.byteLength);
      expect(needed).toBeLessThan(STATEMENTS_PER_TURN);
      let turned = false;
      setImmediate(() => {
        turned = true;
      });
      let statements = 0;
      while (!turned && statements < STATEMENTS_PER_TURN) {
        await connection.execute("SELECT length(?)", [chunk]);
        statements++;
      }
      expect(turned).toBe(true);
      expect(statements).toBeLessThanOrEqual(needed);
    } finally {
      await connection.close();
    }
  });

  it("binds a large blob as a copy of its own, which V8 counts, and a small one as a view", () => {
    const backing = new Uint8Array(COPIED_BLOB_BYTES + 64);
    backing.fill(7, 32);
    const large = backing.subarray(32);
    const small = backing.subarray(0, 32);
    const before = process.memoryUsage().arrayBuffers;
    const [boundLarge, boundSmall] = toDriverParams([large, small]) as [Buffer, Buffer];
    // The copy: equal bytes, memory of its own that V8 accounts for.
    expect(boundLarge.equals(large)).toBe(true);
    expect(boundLarge.buffer).not.toBe(backing.buffer);
    expect(process.memoryUsage().arrayBuffers - before).toBeGreaterThanOrEqual(large.byteLength);
    // The view: the same bytes, not copied.
    expect(boundSmall.buffer).toBe(backing.buffer);
    expect(boundSmall.byteOffset).toBe(0);
    expect(boundSmall.byteLength).toBe(32);
  });
});
