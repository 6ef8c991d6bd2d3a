/**
 * A listing's options, checked before anything is read, and the one query
 * they make. Runs come newest first: by creation time going down, then by
 * location going up, a total order, so a page ends at a (created_at,
 * location) pair and the next one starts strictly after it — keyset paging,
 * no OFFSET, no page costing more than the one before. The cursor is that
 * pair written as text (`c1:<created_at>:<location>`), opaque to callers.
 */
import { RunledgerError } from "../../port/errors.js";
import { checkNames } from "../../port/options.js";
import { placeholders } from "../../port/placeholders.js";
import type { SqlValue } from "../../port/values.js";
import type { RunStatus } from "../types.js";
import type { RunEntry, RunListOptions } from "./types.js";

const LIST_OPTIONS = ["workflowId", "status", "createdAfter", "updatedAfter", "after", "limit"];
const STATUSES: readonly RunStatus[] = [
  "running",
  "suspended",
  "interrupted",
  "completed",
  "failed",
  "cancelled",
];
const DEFAULT_LIMIT = 100;
const MAX_LIMIT = 10_000;
const CURSOR_PREFIX = "c1:";

export interface ListQuery {
  readonly sql: string;
  /** One more row than the page holds: whether there is a next page. */
  readonly params: SqlValue[];
  readonly limit: number;
  cursorAfter(entry: RunEntry): string;
}

export function listQuery(options: RunListOptions): ListQuery {
  checkNames(options, LIST_OPTIONS, "list's options");
  const where: string[] = [];
  const params: SqlValue[] = [];
  const { workflowId, status, createdAfter, updatedAfter, after, limit = DEFAULT_LIMIT } = options;
  if (workflowId !== undefined) {
    if (typeof workflowId !== "string" || workflowId.length === 0) {
      throw invalid(`list's workflowId is a non-empty string; got ${JSON.stringify(workflowId)}`);
    }
    where.push("workflow_id = ?");
    params.push(workflowId);
  }
  if (status !== undefined) {
    const statuses = checkStatuses(status);
    where.push(`status IN ${placeholders(1, statuses.length)}`);
    params.push(...statuses);
  }
  for (const [name, value, column] of [
    ["createdAfter", createdAfter, "created_at"],
    ["updatedAfter", updatedAfter, "updated_at"],
  ] as const) {
    if (value === undefined) continue;
    if (!Number.isSafeInteger(value) || value < 0) {
      throw invalid(`list's ${name} is a time in ms, a whole number >= 0; got ${String(value)}`);
    }
    where.push(`${column} > ?`);
    params.push(value);
  }
  if (after !== undefined) {
    const cursor = parseCursor(after);
    // The first bound lets SQLite seek the index; the second skips the ties before the cursor.
    where.push("created_at <= ? AND (created_at < ? OR location > ?)");
    params.push(cursor.createdAt, cursor.createdAt, cursor.location);
  }
  if (!Number.isSafeInteger(limit) || limit < 1 || limit > MAX_LIMIT) {
    throw invalid(`list's limit is a whole number from 1 to ${MAX_LIMIT}; got ${String(limit)}`);
  }
  params.push(limit + 1);
  const filter = where.length === 0 ? "" : ` WHERE ${where.join(" AND ")}`;
  return {
    sql:
      "SELECT location, workflow_id, run_id, status, stop_reason, created_at, updated_at, " +
      `last_sequence FROM runs${filter} ORDER BY created_at DESC, location LIMIT ?`,
    params,
    limit,
    cursorAfter: (entry) => `${CURSOR_PREFIX}${entry.createdAt}:${entry.location}`,
  };
}

function checkStatuses(status: unknown): RunStatus[] {
  const statuses = Array.isArray(status) ? status : [status];
  if (statuses.length === 0) throw invalid("list's status names at least one status");
  for (const one of statuses) {
    if (!STATUSES.includes(one as RunStatus)) {
      throw invalid(
        `list's status is one of ${STATUSES.join(", ")} (or a list of them); got ${JSON.stringify(one)}`,
      );
    }
  }
  return statuses as RunStatus[];
}

function parseCursor(after: unknown): { createdAt: number; location: string } {
  if (typeof after === "string" && after.startsWith(CURSOR_PREFIX)) {
    const rest = after.slice(CURSOR_PREFIX.length);
    const colon = rest.indexOf(":");
    const createdAt = Number(rest.slice(0, colon));
    const location = rest.slice(colon + 1);
    if (colon > 0 && /^\d+$/.test(rest.slice(0, colon)) && Number.isSafeInteger(createdAt)) {
      if (location.length > 0) return { createdAt, location };
    }
  }
  throw invalid(
    `list's after is the \`next\` of an earlier page, as it was given; got ${JSON.stringify(after)}`,
  );
}

function invalid(message: string): RunledgerError {
  return new RunledgerError("invalid_argument", `${message}; nothing was read`);
}
