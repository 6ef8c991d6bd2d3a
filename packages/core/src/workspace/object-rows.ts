/**
 * The object store's rows: every directory node and every file's content is
 * one row of `workspace_object`, addressed by a SHA-256 — a node by the hash
 * of its bytes, a file by the hash of its content (so `sha256sum` agrees with
 * a file's digest). A file larger than CHUNK_SIZE keeps only its chunk list
 * in that row; its bytes are in `workspace_chunk` (see files.ts). Here: what
 * a row holds, and the statements that write rows, many at a time.
 */
import type { Executor } from "../port/driver.js";
import { RunledgerError } from "../port/errors.js";
import { placeholders, ROWS_PER_STATEMENT } from "../port/placeholders.js";
import type { WriteScope } from "../transaction/scope.js";
import { encodeDelta, MAX_CHAIN } from "./delta.js";
import type { DirectoryNode } from "./node.js";
import { objectIdEquals } from "./object-key.js";

/**
 * `kind` of a row: its data is the content itself, the content's chunk
 * list, or (a directory node only) a delta onto a base node (delta.ts).
 */
export const BYTES = 0;
export const CHUNK_LIST = 1;
export const DELTA = 2;

/** A row of `workspace_object` waiting to be written. */
export interface ObjectRow {
  readonly id: Uint8Array;
  readonly kind: typeof BYTES | typeof CHUNK_LIST;
  readonly size: number;
  readonly data: Uint8Array;
  /**
   * A node may instead be stored as this delta (base id first), when SQLite
   * finds the base stored less than MAX_CHAIN deep.
   */
  readonly delta?: Uint8Array;
}

/** Rows stored whole: id, kind, size, data. */
const wholeSql = (rows: number) =>
  `INSERT INTO workspace_object (id, kind, size, data) VALUES ${placeholders(rows, 4)}`;
/**
 * Rows some of which propose a delta: id, kind, size, whole data, then the
 * delta's base id and data (or nulls). The representation is chosen here,
 * from the base row as stored: a delta only onto a base that is present and
 * less than MAX_CHAIN deep, one deeper than it; otherwise the whole node.
 */
const proposingSql = (rows: number) =>
  `INSERT INTO workspace_object (id, kind, size, depth, data)
SELECT v.column1,
  iif(b.depth < ${MAX_CHAIN}, ${DELTA}, v.column2),
  v.column3,
  iif(b.depth < ${MAX_CHAIN}, b.depth + 1, 0),
  iif(b.depth < ${MAX_CHAIN}, v.column6, v.column4)
FROM (VALUES ${placeholders(rows, 6)}) AS v
LEFT JOIN workspace_object AS b ON ${objectIdEquals("b.id", "v.column5")}`;
const WHOLE_SQL = Array.from({ length: ROWS_PER_STATEMENT + 1 }, (_, n) =>
  n === 0 ? "" : wholeSql(n),
);
const PROPOSING_SQL = Array.from({ length: ROWS_PER_STATEMENT + 1 }, (_, n) =>
  n === 0 ? "" : proposingSql(n),
);

/**
 * Writes rows not yet stored: one statement per 64 rows. The schema's
 * trigger skips a row whose id is already present (earlier rows of the same
 * statement included), leaving the stored row as it is. Nothing of the
 * answer is read, so a driver may send them later (port/driver.ts).
 */
export async function insertObjects(executor: Executor, rows: readonly ObjectRow[]): Promise<void> {
  for (const [sql, params] of insertStatements(rows)) await executor.execute(sql, params, LATER);
}

/** `insertObjects` with its statements run now (`WriteScope.executeNow`): where `runsNow`. */
export function insertObjectsNow(scope: WriteScope, rows: readonly ObjectRow[]): void {
  for (const [sql, params] of insertStatements(rows)) {
    if (scope.executeNow(sql, params) === undefined) {
      throw new RunledgerError(
        "internal_error",
        "objects were to be written now where statements do not run now; report this as a bug",
      );
    }
  }
}

/** The statements that write `rows`, with their parameters. */
function* insertStatements(
  rows: readonly ObjectRow[],
): Generator<[sql: string, params: (Uint8Array | number | null)[]]> {
  for (let start = 0; start < rows.length; start += ROWS_PER_STATEMENT) {
    const batch = rows.slice(start, start + ROWS_PER_STATEMENT);
    const params: (Uint8Array | number | null)[] = [];
    if (batch.every((row) => row.delta === undefined)) {
      for (const row of batch) params.push(row.id, row.kind, row.size, row.data);
      yield [WHOLE_SQL[batch.length]!, params];
      continue;
    }
    for (const row of batch) {
      const delta = row.delta;
      params.push(
        row.id,
        row.kind,
        row.size,
        row.data,
        delta === undefined ? null : delta.subarray(0, 32),
        delta ?? null,
      );
    }
    yield [PROPOSING_SQL[batch.length]!, params];
  }
}

const LATER = { later: true } as const;

/** The rows for nodes built in one operation: each whole, or as a delta onto the node it replaced. */
export function nodeRows(nodes: readonly DirectoryNode[]): ObjectRow[] {
  const rows: ObjectRow[] = [];
  for (const node of nodes) {
    const bytes = node.bytes;
    if (bytes === undefined) continue;
    const delta = node.base === undefined ? undefined : encodeDelta(node.base, node);
    rows.push(
      delta === undefined
        ? { id: node.id, kind: BYTES, size: bytes.length, data: bytes }
        : { id: node.id, kind: BYTES, size: bytes.length, data: bytes, delta },
    );
  }
  return rows;
}
