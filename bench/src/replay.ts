/**
 * Record and replay: the raw driver doing exactly the work runledger does.
 *
 * `recordingDriver` wraps a driver and writes down every statement that
 * reaches the port — SQL, parameters, BEGIN/COMMIT/ROLLBACK and scripts — in
 * order. `replay` runs such a recording through better-sqlite3 directly:
 * prepared statements, synchronous calls, no core above. The replayed file
 * holds the same rows as the recorded one (ids and timestamps are in the
 * parameters), so the difference in time is what core's code costs on top of
 * SQLite doing the same reads and writes.
 */
import type {
  BeginMode,
  ConnectionSettings,
  Driver,
  DriverConnection,
  DriverTransaction,
  SqlValue,
} from "@runledger/core/port";
import { applySettings } from "@runledger/core/port";
import Database from "better-sqlite3";

/** One call that reached the port. */
export type Recorded =
  | { readonly kind: "statement"; readonly sql: string; readonly params: readonly SqlValue[] }
  | { readonly kind: "script"; readonly sql: string };

export interface Recording {
  /** The calls per opened connection, in order. */
  readonly connections: Recorded[][];
}

export function recordingDriver(inner: Driver, recording: Recording): Driver {
  return {
    name: `${inner.name} (recorded)`,
    ...(inner.asyncContext === undefined ? {} : { asyncContext: inner.asyncContext }),
    canonicalize: (location) => inner.canonicalize(location),
    async open(location, options) {
      const calls: Recorded[] = [];
      recording.connections.push(calls);
      return recordConnection(await inner.open(location, options), calls);
    },
  };
}

function recordConnection(inner: DriverConnection, calls: Recorded[]): DriverConnection {
  const connection: DriverConnection = {
    execute(sql, params = []) {
      calls.push({ kind: "statement", sql, params: [...params] });
      return inner.execute(sql, params);
    },
    executeScript(sql) {
      calls.push({ kind: "script", sql });
      return inner.executeScript(sql);
    },
    async begin(mode: BeginMode): Promise<DriverTransaction> {
      calls.push({ kind: "statement", sql: BEGIN[mode], params: [] });
      const transaction = await inner.begin(mode);
      return {
        execute(sql, params = []) {
          calls.push({ kind: "statement", sql, params: [...params] });
          return transaction.execute(sql, params);
        },
        executeScript(sql) {
          calls.push({ kind: "script", sql });
          return transaction.executeScript(sql);
        },
        commit() {
          calls.push({ kind: "statement", sql: "COMMIT", params: [] });
          return transaction.commit();
        },
        rollback() {
          calls.push({ kind: "statement", sql: "ROLLBACK", params: [] });
          return transaction.rollback();
        },
      };
    },
    // The settings go through this wrapper, so their PRAGMAs are recorded too.
    configure: (settings: ConnectionSettings) => applySettings(connection, settings),
    close: () => inner.close(),
  };
  return connection;
}

const BEGIN: Record<BeginMode, string> = {
  immediate: "BEGIN IMMEDIATE",
  deferred: "BEGIN DEFERRED",
};

/**
 * Replays one connection's calls on `file` with better-sqlite3: the handle is
 * opened as adapter-node opens it (foreign keys on), each distinct SQL text is
 * prepared once, and reads are run to completion.
 */
export function replay(file: string, calls: readonly Recorded[]): void {
  const db = new Database(file);
  try {
    db.defaultSafeIntegers(true);
    db.pragma("foreign_keys = ON");
    const statements = new Map<string, Database.Statement>();
    for (const call of calls) {
      if (call.kind === "script") {
        db.exec(call.sql);
        continue;
      }
      let statement = statements.get(call.sql);
      if (statement === undefined) {
        statement = db.prepare(call.sql);
        statements.set(call.sql, statement);
      }
      if (statement.reader) statement.all(...call.params);
      else statement.run(...call.params);
    }
  } finally {
    db.close();
  }
}
