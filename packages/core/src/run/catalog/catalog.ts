/**
 * The owner of the catalog's `runs` table: every read and write of it is
 * here. Callers hand in entries read from their runs; this file never opens
 * a run and never decides what a run holds.
 */
import type { DatabaseAccess } from "../../commit-log/context.js";
import type { Executor } from "../../port/driver.js";
import { RunledgerError } from "../../port/errors.js";
import type { Row } from "../../port/values.js";
import type { RunStatus, StopReason } from "../types.js";
import type { ListQuery } from "./list-options.js";
import type { RunEntry, RunList } from "./types.js";

const COLUMNS =
  "location, workflow_id, run_id, status, stop_reason, created_at, updated_at, last_sequence";

const UPSERT = `INSERT INTO runs (${COLUMNS}) VALUES (?, ?, ?, ?, ?, ?, ?, ?)
  ON CONFLICT (location) DO UPDATE SET workflow_id = excluded.workflow_id,
  run_id = excluded.run_id, status = excluded.status, stop_reason = excluded.stop_reason,
  created_at = excluded.created_at, updated_at = excluded.updated_at,
  last_sequence = excluded.last_sequence`;

/** The catalog of one store: its runs table, through the catalog database's lease. */
export class RunCatalog {
  readonly #access: DatabaseAccess;

  constructor(access: DatabaseAccess) {
    this.#access = access;
  }

  get location(): string {
    return this.#access.location;
  }

  /** The row of one run, or undefined when the catalog does not list it. */
  get(location: string): Promise<RunEntry | undefined> {
    return this.#access.read(async (reader) => entryAt(reader, location));
  }

  /**
   * Writes `entry` unless the catalog holds exactly it already: a read, and a
   * write only when the row is new or differs. Answers what it did.
   */
  async record(entry: RunEntry): Promise<"added" | "updated" | "unchanged"> {
    const found = await this.get(entry.location);
    if (found !== undefined && sameEntry(found, entry)) return "unchanged";
    await this.#access.transact((tx) => tx.execute(UPSERT, entryParams(entry)));
    return found === undefined ? "added" : "updated";
  }

  /** Deletes the row of one run; true when there was one. */
  async forget(location: string): Promise<boolean> {
    const { changes } = await this.#access.transact((tx) =>
      tx.execute("DELETE FROM runs WHERE location = ?", [location]),
    );
    return changes > 0;
  }

  /** Every location the catalog lists, in location order (for reconcile). */
  locations(): Promise<string[]> {
    return this.#access.read(async (reader) => {
      const { rows } = await reader.execute("SELECT location FROM runs ORDER BY location");
      return rows.map((row) => String(row.location));
    });
  }

  /** One page of runs, newest first (see RunStore.list), for options checked by `listQuery`. */
  async list(query: ListQuery): Promise<RunList> {
    const rows = await this.#access.read(
      async (reader) => (await reader.execute(query.sql, query.params)).rows,
    );
    const runs = rows.slice(0, query.limit).map(toEntry);
    const last = runs[runs.length - 1];
    return {
      runs,
      next: rows.length > query.limit && last !== undefined ? query.cursorAfter(last) : undefined,
    };
  }
}

async function entryAt(reader: Executor, location: string): Promise<RunEntry | undefined> {
  const { rows } = await reader.execute(`SELECT ${COLUMNS} FROM runs WHERE location = ?`, [
    location,
  ]);
  const row = rows[0];
  return row === undefined ? undefined : toEntry(row);
}

function entryParams(entry: RunEntry): (string | number | null)[] {
  return [
    entry.location,
    entry.workflowId,
    entry.runId,
    entry.status,
    entry.stopReason === null ? null : JSON.stringify(entry.stopReason),
    entry.createdAt,
    entry.updatedAt,
    entry.lastSequence,
  ];
}

function toEntry(row: Row): RunEntry {
  let stopReason: StopReason | null = null;
  if (row.stop_reason !== null) {
    try {
      stopReason = JSON.parse(String(row.stop_reason)) as StopReason;
    } catch (cause) {
      throw new RunledgerError(
        "corrupt",
        `the catalog's row for ${String(row.location)} holds a stop reason that is not JSON; ` +
          "rebuild the catalog with store.reconcile()",
        { cause },
      );
    }
  }
  return {
    location: String(row.location),
    workflowId: String(row.workflow_id),
    runId: String(row.run_id),
    status: String(row.status) as RunStatus,
    stopReason,
    createdAt: Number(row.created_at),
    updatedAt: Number(row.updated_at),
    lastSequence: Number(row.last_sequence),
  };
}

function sameEntry(a: RunEntry, b: RunEntry): boolean {
  return (
    a.workflowId === b.workflowId &&
    a.runId === b.runId &&
    a.status === b.status &&
    JSON.stringify(a.stopReason) === JSON.stringify(b.stopReason) &&
    a.createdAt === b.createdAt &&
    a.updatedAt === b.updatedAt &&
    a.lastSequence === b.lastSequence
  );
}
