/**
 * A transaction sent whole, in Hrana's own terms (JSON: version 2's
 * messages, which version 3 keeps), as both kept streams send it
 * (kept-stream.ts over WebSocket, kept-http-stream.ts over HTTP): BEGIN
 * IMMEDIATE, each statement only if the one before it succeeded, COMMIT
 * only if they all did, ROLLBACK unless COMMIT succeeded — so the stream
 * is never left inside a transaction. A SQL text seen for the first time is
 * stored on the stream (a `store_sql` request before the batch) and named
 * by its id afterwards. Values are encoded as @libsql/hrana-client encodes
 * them (a JS number is a float), and the server's refusals become
 * @libsql/client's errors (a LibsqlError with the server's code;
 * `statementIndex` for a statement's), so the adapter's translation reads
 * them as it reads the client's.
 */
import { type InStatement, LibsqlError } from "@libsql/client";

/** At most this many SQL texts are stored per stream (sqld keeps a bounded number). */
const STORED_SQL = 64;

/** The SQL texts stored on one stream, by the ids given them; cleared with the stream. */
export class StoredSql {
  readonly #ids = new Map<string, number>();
  readonly #limit: number;
  #next = 1;

  /** `limit`: how many texts may be stored (0: none, every text goes inline). */
  constructor(limit = STORED_SQL) {
    this.#limit = limit;
  }

  clear(): void {
    this.#ids.clear();
  }

  /** The text's id, stored now (its request pushed to `requests`) if it was not; undefined when full. */
  idFor(sql: string, requests: unknown[]): number | undefined {
    let id = this.#ids.get(sql);
    if (id === undefined && this.#ids.size < this.#limit) {
      id = this.#next++;
      this.#ids.set(sql, id);
      requests.push({ type: "store_sql", sql_id: id, sql });
    }
    return id;
  }
}

/** The requests that send `statements` whole: the texts to store first, then the batch. */
export interface WholeBatch {
  /** `store_sql` requests, in order, then the `batch` request last. */
  readonly requests: readonly unknown[];
  /** The index of the COMMIT step (the statements are steps 1 … commit - 1). */
  readonly commit: number;
}

export function wholeBatch(statements: readonly InStatement[], stored: StoredSql): WholeBatch {
  const requests: unknown[] = [];
  const steps: unknown[] = [{ stmt: { sql: "BEGIN IMMEDIATE", want_rows: false } }];
  for (const statement of statements) {
    const stmt = statementStep(statement, stored, requests, false);
    steps.push({ condition: { type: "ok", step: steps.length - 1 }, stmt });
  }
  const commit = steps.length;
  steps.push({
    condition: { type: "ok", step: commit - 1 },
    stmt: { sql: "COMMIT", want_rows: false },
  });
  steps.push({
    condition: { type: "not", cond: { type: "ok", step: commit } },
    stmt: { sql: "ROLLBACK", want_rows: false },
  });
  requests.push(batchRequest(steps));
  return { requests, commit };
}

/** A `batch` request of `steps`. */
export function batchRequest(steps: readonly unknown[]): unknown {
  return { type: "batch", batch: { steps } };
}

/**
 * A statement as a batch step sends it: by the id of its stored text (a
 * `store_sql` request pushed to `requests` the first time), its arguments
 * encoded, its rows asked for when `wantRows`.
 */
export function statementStep(
  statement: InStatement,
  stored: StoredSql,
  requests: unknown[],
  wantRows: boolean,
): Record<string, unknown> {
  const { sql, args } =
    typeof statement === "string" ? { sql: statement, args: undefined } : statement;
  const id = stored.idFor(sql, requests);
  const stmt: Record<string, unknown> = id === undefined ? { sql } : { sql_id: id };
  if (Array.isArray(args)) stmt.args = args.map(hranaValue);
  stmt.want_rows = wantRows;
  return stmt;
}

/** A batch's answer (`response.result` of a `batch` request). */
export interface BatchResult {
  readonly step_results?: ReadonlyArray<unknown>;
  readonly step_errors?: ReadonlyArray<ProtoError | null>;
}

/** The first failure among BEGIN, the statements and COMMIT, or undefined when COMMIT succeeded. */
export function batchFailure(
  result: BatchResult | undefined,
  commit: number,
): LibsqlError | undefined {
  const errors = result?.step_errors ?? [];
  for (let step = 0; step <= commit; step++) {
    const error = errors[step];
    if (error === null || error === undefined) continue;
    return fromProto(error, step > 0 && step < commit ? step - 1 : undefined);
  }
  if (result === undefined) return protoError("the server answered a batch without its result");
  return undefined;
}

/** An error as the server sends it. */
export interface ProtoError {
  readonly message: string;
  readonly code?: string | null;
}

/** The server's refusal as @libsql/client's error: its code first in the message, as the client puts it. */
export function fromProto(error: ProtoError, statementIndex?: number): LibsqlError {
  const failure = new LibsqlError(error.message, error.code ?? "UNKNOWN");
  if (statementIndex !== undefined) {
    Object.defineProperty(failure, "statementIndex", { value: statementIndex, enumerable: true });
  }
  return failure;
}

/** A kept stream used after its connection closed, as @libsql/client reports a closed client. */
export function clientClosed(): LibsqlError {
  return new LibsqlError("the connection is closed", "CLIENT_CLOSED");
}

/** An answer this client does not understand. */
export function protoError(message: string, cause?: unknown): LibsqlError {
  return new LibsqlError(
    message,
    "HRANA_PROTO_ERROR",
    undefined,
    undefined,
    cause as Error | undefined,
  );
}

/** A bound value in Hrana's JSON, as @libsql/hrana-client encodes it (a JS number is a float). */
function hranaValue(value: unknown): unknown {
  if (value === null || value === undefined) return { type: "null" };
  if (typeof value === "string") return { type: "text", value };
  if (typeof value === "number") {
    if (!Number.isFinite(value)) {
      throw new RangeError("Only finite numbers (not Infinity or NaN) can be passed as arguments");
    }
    return { type: "float", value };
  }
  if (typeof value === "bigint") return { type: "integer", value: String(value) };
  if (typeof value === "boolean") return { type: "integer", value: value ? "1" : "0" };
  if (value instanceof Uint8Array) return { type: "blob", base64: base64(value) };
  if (value instanceof ArrayBuffer) return { type: "blob", base64: base64(new Uint8Array(value)) };
  if (value instanceof Date) return { type: "float", value: value.valueOf() };
  throw new TypeError(`a value of type ${typeof value} cannot be bound`);
}

function base64(bytes: Uint8Array): string {
  return Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength).toString("base64");
}
