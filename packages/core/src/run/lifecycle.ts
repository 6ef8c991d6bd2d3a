/**
 * The run lifecycle as a state machine (docs/contracts.md, "Run lifecycle").
 *
 * running ──stop──▶ suspended | interrupted | completed | failed | cancelled
 * suspended | interrupted ──resume──▶ running (records a `run.resumed` event)
 * suspended | interrupted ──stop──▶ completed | failed | cancelled
 * completed | failed | cancelled: terminal, nothing moves them.
 *
 * Events (appends, applies, resumes' own event) are written only while the
 * run is running. The API refuses a move before it writes anything, with a
 * code of its own; the schema's triggers (journal_run_running,
 * run_status_transition) refuse the same moves for any writer, and their
 * refusal is read back here as the same code.
 */
import { isRunledgerError, RunledgerError } from "../port/errors.js";
import type { RunStatus } from "./types.js";

/** The statuses nothing moves a run out of. */
export const TERMINAL_STATUSES: ReadonlySet<RunStatus> = new Set<RunStatus>([
  "completed",
  "failed",
  "cancelled",
]);

/** The statuses a run leaves only through `tx.run.resume()` or a stop in a terminal status. */
export const PAUSED_STATUSES: ReadonlySet<RunStatus> = new Set<RunStatus>([
  "suspended",
  "interrupted",
]);

/** The marker the schema's lifecycle triggers put in their message. */
const TRIGGER_MARKER = "run lifecycle:";

/** True when SQLite refused a write through one of the lifecycle triggers. */
export function isLifecycleRefusal(error: unknown): boolean {
  // By the marker, not only the extended code: a driver that reports
  // messages alone (docs/writing-an-adapter.md) still carries the trigger's text.
  if (!isRunledgerError(error)) return false;
  const cause = error.cause instanceof Error ? error.cause.message : "";
  return error.message.includes(TRIGGER_MARKER) || cause.includes(TRIGGER_MARKER);
}

/**
 * The refusal for `action` on a run in `status`, or undefined when the
 * machine allows it. `target` is the status a stop asks for.
 */
export function lifecycleRefusal(
  status: RunStatus,
  action: "append" | "apply" | "stop" | "resume",
  target?: RunStatus,
  cause?: unknown,
): RunledgerError | undefined {
  const options = cause === undefined ? {} : { cause };
  if (TERMINAL_STATUSES.has(status)) {
    return new RunledgerError(
      "run_finished",
      `cannot ${action}: the run is ${status}, and a ${status} run is final (nothing was ` +
        "written); fork it to continue from its workspace",
      { ...options, details: { status } },
    );
  }
  if (PAUSED_STATUSES.has(status)) {
    if (action === "resume") return undefined;
    if (action === "stop" && target !== undefined && TERMINAL_STATUSES.has(target)) {
      return undefined;
    }
    const what =
      action === "stop"
        ? `stop it as ${target}`
        : action === "append"
          ? "append to it"
          : "apply to its workspace";
    return new RunledgerError(
      "run_not_running",
      `cannot ${what}: the run is ${status} (nothing was written); resume it with ` +
        "tx.run.resume() first, or stop it as completed, failed or cancelled",
      { ...options, details: { status } },
    );
  }
  if (action === "resume") {
    return new RunledgerError(
      "run_not_stopped",
      "cannot resume: the run is running already; only a suspended or interrupted run resumes",
      { ...options, details: { status } },
    );
  }
  return undefined;
}
