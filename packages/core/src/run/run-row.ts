/**
 * The run row: the run's identity, status and stop reason, read and
 * changed under the lifecycle's rules (./lifecycle.ts).
 */
import { isRunledgerError, RunledgerError } from "../port/errors.js";
import type { JsonObject, JsonValue } from "../port/json.js";
import { checkNames } from "../port/options.js";
import type { Row } from "../port/values.js";
import type { CallbackScope, WriteScope } from "../transaction/scope.js";
import { type JournalWriter, journalText } from "./journal.js";
import { isLifecycleRefusal, lifecycleRefusal } from "./lifecycle.js";
import type {
  AppendResult,
  RunContext,
  RunInfo,
  RunStatus,
  StopReason,
  StopStatus,
} from "./types.js";

const GET = `SELECT workflow_id, run_id, definition, status, stop_host, stop_code, stop_event,
  created_at, updated_at FROM run WHERE singleton = 1`;

const SET_STATUS = `UPDATE run SET status = ?, stop_host = ?, stop_code = ?, stop_event = ?,
  updated_at = ? WHERE singleton = 1`;

const STATUS = "SELECT status FROM run WHERE singleton = 1";

const STOP_STATUSES: ReadonlySet<string> = new Set<StopStatus>([
  "suspended",
  "interrupted",
  "completed",
  "failed",
  "cancelled",
]);

/**
 * Reads the run row. Each call is an operation of the snapshot or
 * transaction that handed out this reader: its callback must await it.
 */
export class RunRecordReader {
  /** @internal */
  protected readonly executor: CallbackScope;

  constructor(scope: CallbackScope) {
    this.executor = scope;
  }

  /** The run's status alone: one primary-key lookup. */
  status(): Promise<RunStatus> {
    return this.executor.track(this.#status());
  }

  get(): Promise<RunInfo> {
    return this.executor.track(this.#get());
  }

  async #status(): Promise<RunStatus> {
    const { rows } = await this.executor.execute(STATUS);
    const row = rows[0];
    if (row === undefined) {
      throw new RunledgerError("corrupt", "the run row is missing; restore the file from a copy");
    }
    return row.status as RunStatus;
  }

  async #get(): Promise<RunInfo> {
    const { rows } = await this.executor.execute(GET);
    const row = rows[0];
    if (row === undefined) {
      throw new RunledgerError("corrupt", "the run row is missing; restore the file from a copy");
    }
    return toRunInfo(row);
  }
}

/** Changes the run's status and stop reason inside the caller's transaction. */
export class RunRecordWriter extends RunRecordReader {
  readonly #scope: WriteScope;
  readonly #context: RunContext;
  readonly #journal: (scope: WriteScope) => JournalWriter;
  readonly #marks: { statusChanged: boolean };

  /** `journal` gives the journal writer a resume records its event with, on the scope given. */
  constructor(
    scope: WriteScope,
    context: RunContext,
    journal: (scope: WriteScope) => JournalWriter,
    marks: { statusChanged: boolean } = { statusChanged: false },
  ) {
    super(scope);
    this.#scope = scope;
    this.#context = context;
    this.#journal = journal;
    this.#marks = marks;
  }

  /**
   * Stops the run with a status and, optionally, a reason: `{ host, code }`
   * or `{ event }` naming a journal sequence. A reason naming no event is
   * refused as `invalid_stop_reason` by the foreign key itself, at this one
   * statement; the transaction stays usable. The lifecycle decides which
   * stops a run takes: a running run stops in
   * any status, a suspended or interrupted one only in a terminal status, a
   * terminal one never (`run_finished`, `run_not_running`; nothing written).
   */
  stop(options: { status: StopStatus; reason?: StopReason }): Promise<RunInfo> {
    return this.#scope.track(this.#stop(options));
  }

  async #stop(options: { status: StopStatus; reason?: StopReason }): Promise<RunInfo> {
    checkNames(options, ["status", "reason"], "stop's options");
    const { status, reason } = options;
    if (!STOP_STATUSES.has(status)) {
      throw new RunledgerError(
        "invalid_argument",
        `a run stops as one of ${[...STOP_STATUSES].join(", ")}; got ${JSON.stringify(status)}`,
      );
    }
    const columns = reasonColumns(reason);
    const refused = lifecycleRefusal(await this.status(), "stop", status);
    if (refused !== undefined) throw refused;
    try {
      await this.executor.execute(SET_STATUS, [status, ...columns, this.#context.clock()]);
    } catch (error) {
      if (isLifecycleRefusal(error)) {
        // Another writer moved the run between the read above and this write.
        throw lifecycleRefusal(await this.status(), "stop", status, error) ?? error;
      }
      if (isRunledgerError(error, "constraint_foreign_key") && columns[2] !== null) {
        throw new RunledgerError(
          "invalid_stop_reason",
          `the stop reason names journal event ${columns[2]}, which does not exist; ` +
            "append the event first, then stop with its sequence",
          { cause: error, ...(error.sqliteCode ? { sqliteCode: error.sqliteCode } : {}) },
        );
      }
      if (isRunledgerError(error) && error.code.startsWith("constraint")) this.#scope.doom(error);
      throw error;
    }
    this.#marks.statusChanged = true;
    return this.get();
  }

  /**
   * Marks a suspended or interrupted run as running again, clearing its stop
   * reason, and records that in the journal: `event` (by default
   * `{ kind: "run.resumed", from: <the status it left> }`) is appended in the
   * same savepoint. Returns that event. A running run is refused
   * (`run_not_stopped`), a terminal one too (`run_finished`).
   */
  resume(options: { event?: JsonObject } = {}): Promise<AppendResult> {
    return this.#scope.track(this.#resume(options));
  }

  async #resume(options: { event?: JsonObject }): Promise<AppendResult> {
    checkNames(options, ["event"], "resume's options");
    const from = await this.status();
    const refused = lifecycleRefusal(from, "resume");
    if (refused !== undefined) throw refused;
    const record = journalText(options.event ?? { kind: "run.resumed", from });
    return this.#scope.savepoint(async (sp) => {
      await sp.execute(SET_STATUS, ["running", null, null, null, this.#context.clock()]);
      const appended = await this.#journal(sp).appendText(record);
      this.#marks.statusChanged = true;
      return appended;
    });
  }
}

function reasonColumns(
  reason: StopReason | undefined,
): [string | null, string | null, number | null] {
  if (reason === undefined) return [null, null, null];
  const shape = reason as { host?: unknown; code?: unknown; event?: unknown };
  const keys = Object.keys(reason).sort().join(",");
  if (keys === "code,host" && isName(shape.host) && isName(shape.code)) {
    return [shape.host as string, shape.code as string, null];
  }
  if (keys === "event" && Number.isSafeInteger(shape.event) && (shape.event as number) >= 1) {
    return [null, null, shape.event as number];
  }
  throw new RunledgerError(
    "invalid_stop_reason",
    "a stop reason is { host, code } (two strings of 1 to 256 characters) or { event } " +
      "(a journal sequence); nothing was written",
  );
}

function isName(value: unknown): boolean {
  return typeof value === "string" && value.length >= 1 && value.length <= 256;
}

function toRunInfo(row: Row): RunInfo {
  const stopReason: StopReason | null =
    row.stop_event !== null
      ? { event: Number(row.stop_event) }
      : row.stop_host !== null
        ? { host: String(row.stop_host), code: String(row.stop_code) }
        : null;
  return {
    workflowId: String(row.workflow_id),
    runId: String(row.run_id),
    definition: row.definition === null ? null : (JSON.parse(String(row.definition)) as JsonValue),
    status: row.status as RunStatus,
    stopReason,
    createdAt: Number(row.created_at),
    updatedAt: Number(row.updated_at),
  };
}
