import type { Establish } from "../connection/provider.js";
import type { Executor } from "../port/driver.js";
import { RunledgerError } from "../port/errors.js";
import type { Row } from "../port/values.js";
import { createSchema } from "../schema/create.js";
import { asDamage, describeFresh, recognize } from "../schema/recognize.js";
import type { WriteScope } from "../transaction/scope.js";
import { EMPTY_ROOT_ID_BYTES, EMPTY_TREE_ID_BYTES, ROOT_FORMAT } from "../workspace/identity.js";
import { toJsonText } from "./json.js";
import { SCHEMA_V1 } from "./schema-v1.js";
import type { RunContext, RunCreate } from "./types.js";

/**
 * The run database's establish step, run in the entry's first turn:
 * 1. recognize the file, reading only (a refusal leaves it as found);
 * 2. if it is fresh and the caller asked to create: create version 1 inside
 *    one BEGIN IMMEDIATE, re-checking freshness under the lock so that two
 *    processes creating the same run at once produce one run, not a clash;
 * 3. check the singleton rows and the run's identity (right after step 1
 *    for an existing file, in the creating transaction for a new one);
 * 4. only then switch to WAL (unless the file is in it already) and set
 *    durability.
 */
export function establishRun(context: RunContext): Establish<RunCreate> {
  return async ({ location, create, read, transact, configure }) => {
    // Two statements: the schema, then — for a file that is ours — its singleton rows.
    const found = await read(async (reader) => {
      const recognized = await recognize(reader, SCHEMA_V1, location);
      if (recognized.kind !== "fresh") await checkSingletons(reader, location, create);
      return recognized;
    });
    if (found.kind === "fresh") {
      if (create === undefined) {
        throw new RunledgerError(
          "not_found",
          `no run at ${location}: ${describeFresh(found)}; pass { create: { workflowId, runId } } to create one`,
        );
      }
      await transact(async (tx) => {
        const again = await recognize(tx, SCHEMA_V1, location);
        if (again.kind === "fresh") await tx.savepoint((sp) => createRun(sp, create, context));
        // Another process may have created it first: check what is there either way.
        await checkSingletons(tx, location, create);
      });
    }
    await configure(found);
  };
}

/** Refuses a malformed create request before any file is touched. */
export function validateCreate(create: RunCreate): string | null {
  const { workflowId, runId } = create;
  for (const [name, value] of [
    ["workflowId", workflowId],
    ["runId", runId],
  ] as const) {
    if (typeof value !== "string" || value.length < 1 || value.length > 256) {
      throw new RunledgerError(
        "invalid_argument",
        `create.${name} must be a string of 1 to 256 characters`,
      );
    }
  }
  return create.definition === undefined
    ? null
    : toJsonText(create.definition, "create.definition");
}

async function createRun(tx: WriteScope, create: RunCreate, context: RunContext): Promise<void> {
  const definition = validateCreate(create);
  const now = context.clock();
  await createSchema(tx, SCHEMA_V1, async () => {
    await tx.execute("INSERT INTO workspace_tree (tree_id, entry_count) VALUES (?, 0)", [
      EMPTY_TREE_ID_BYTES,
    ]);
    await tx.execute(
      "INSERT INTO workspace_root (root_id, format, tree_id, created_at) VALUES (?, ?, ?, ?)",
      [EMPTY_ROOT_ID_BYTES, ROOT_FORMAT, EMPTY_TREE_ID_BYTES, now],
    );
    await tx.execute("INSERT INTO workspace_current (singleton, root_id) VALUES (1, ?)", [
      EMPTY_ROOT_ID_BYTES,
    ]);
    await tx.execute(
      `INSERT INTO run (singleton, workflow_id, run_id, definition, status, created_at, updated_at)
VALUES (1, ?, ?, ?, 'running', ?, ?)`,
      [create.workflowId, create.runId, definition, now, now],
    );
  });
}

/**
 * The rows a version-1 file must hold beyond its schema, read in one
 * statement: the run row, the current-root row and the root it names. The
 * recognized schema lets each singleton table hold at most one row (its key
 * must be 1), so a well-formed file returns exactly one row here; it reads
 * three primary-key lookups, O(1), never O(data).
 */
const SINGLETONS = `SELECT r.workflow_id, r.run_id
FROM run AS r, workspace_current AS c, workspace_root AS w
WHERE r.singleton = 1 AND c.singleton = 1 AND w.root_id = c.root_id`;

/** Only when SINGLETONS found nothing: which of the three rows is missing, to say so. */
const MISSING_SINGLETONS = `SELECT (SELECT count(*) FROM run) AS runs,
(SELECT count(*) FROM workspace_current) AS currents`;

/** The rows a version-1 file must hold beyond its schema: O(1), never O(data). */
async function checkSingletons(
  reader: Executor,
  location: string,
  create: RunCreate | undefined,
): Promise<void> {
  const row = await readDamaged(reader, SINGLETONS, location);
  if (row === undefined) {
    throw singletonDamage(location, await readDamaged(reader, MISSING_SINGLETONS, location));
  }
  if (
    create !== undefined &&
    (row.workflow_id !== create.workflowId || row.run_id !== create.runId)
  ) {
    throw identityMismatch(
      location,
      { workflowId: String(row.workflow_id), runId: String(row.run_id) },
      create,
    );
  }
}

/** The first row of a recognition read; SQLite's own refusal is read as damage. */
async function readDamaged(
  reader: Executor,
  sql: string,
  location: string,
): Promise<Row | undefined> {
  try {
    return (await reader.execute(sql)).rows[0];
  } catch (error) {
    throw asDamage(error, SCHEMA_V1, location);
  }
}

function singletonDamage(location: string, counts: Row | undefined): RunledgerError {
  const what =
    Number(counts?.runs ?? 0) === 0
      ? "it holds no run row"
      : Number(counts?.currents ?? 0) === 0
        ? "it has no current workspace root"
        : "its current workspace root does not exist";
  return new RunledgerError(
    "corrupt",
    `cannot open ${location} as a run database: ${what}; restore it from a copy`,
  );
}

export function identityMismatch(
  location: string,
  found: { workflowId: string; runId: string },
  wanted: RunCreate,
): RunledgerError {
  return new RunledgerError(
    "run_identity_mismatch",
    `${location} already holds run ${found.runId} of workflow ${found.workflowId}, ` +
      `not run ${wanted.runId} of workflow ${wanted.workflowId}; choose another location`,
    { details: { workflowId: found.workflowId, runId: found.runId } },
  );
}
