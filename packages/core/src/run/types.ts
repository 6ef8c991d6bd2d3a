/**
 * The run API's value types (statuses, stop reasons, events, results) and
 * the context a run store shares with its leases.
 */
import type { InjectedContext } from "../port/context.js";
import type { JsonObject, JsonValue } from "../port/json.js";
import type { WorkspaceContext } from "../workspace/context.js";

export type RunStatus =
  | "running"
  | "suspended"
  | "interrupted"
  | "completed"
  | "failed"
  | "cancelled";

/** The statuses a run can stop in. */
export type StopStatus = Exclude<RunStatus, "running">;

/**
 * Why a run stopped, in one of two shapes: a host-side reason (which host,
 * which code), or the journal event that explains it. A run stopped without
 * a reason has `stopReason: null`; SQLite's CHECK on the run row allows
 * exactly these three states.
 */
export type StopReason =
  | { readonly host: string; readonly code: string }
  | { readonly event: number };

export interface RunCreate {
  readonly workflowId: string;
  readonly runId: string;
  readonly definition?: JsonValue;
}

export interface RunInfo {
  readonly workflowId: string;
  readonly runId: string;
  readonly definition: JsonValue | null;
  readonly status: RunStatus;
  readonly stopReason: StopReason | null;
  readonly createdAt: number;
  readonly updatedAt: number;
}

export interface JournalEvent {
  readonly sequence: number;
  readonly eventId: string;
  readonly key: string | null;
  readonly record: JsonObject;
  /** The workspace root current when the event was written (hex). */
  readonly rootId: string;
  readonly writtenAt: number;
}

export interface AppendResult {
  readonly sequence: number;
  readonly eventId: string;
  readonly rootId: string;
}

/** Injected time and ids (timestamps, event ids), and what the store's workspaces share. */
export interface RunContext extends InjectedContext {
  readonly workspace: WorkspaceContext;
}
