/**
 * The run database's establish hook: what happens in an entry's first turn
 * before any lease of a run exists (recognize, create if asked, check the
 * singleton rows, then WAL).
 */

import type { Establish, Initialize } from "../connection/provider-options.js";
import type { Executor } from "../port/driver.js";
import { RunledgerError } from "../port/errors.js";
import { toJsonText } from "../port/json.js";
import { checkNames } from "../port/options.js";
import type { Row } from "../port/values.js";
import { createObjects, finishSchema } from "../schema/create.js";
import { asDamage, describeFresh, encodingMismatch, recognize } from "../schema/recognize.js";
import type { WriteScope } from "../transaction/scope.js";
import { WORKSPACE_ENCODING_V1 } from "../workspace/encoding.js";
import { EMPTY_NODE } from "../workspace/node-encoding.js";
import { objectStored } from "../workspace/object-key.js";
import { insertObjects, nodeRows } from "../workspace/object-rows.js";
import { APPLICATION_ID, RUN_SCHEMA_VERSION, SCHEMA_V1 } from "./schema-v1.js";
import type { RunContext, RunCreate } from "./types.js";

/**
 * The run database's establish step, run in the entry's first turn:
 * 1. recognize the file, reading only (a refusal leaves it as found);
 * 2. if it is fresh and the caller asked to create: create version 1 inside
 *    one BEGIN IMMEDIATE, re-checking freshness under the lock so that two
 *    processes creating the same run at once produce one run, not a clash;
 * 3. check the singleton rows, the workspace encoding the file records and
 *    the run's identity (right after step 1 for an existing file, in the
 *    creating transaction for a new one);
 * 4. only then switch to WAL (unless the file is in it already) and set
 *    durability — for a file that is ours. A fresh file is switched before
 *    step 2: it holds nothing to leave as found.
 */
export function establishRun(context: RunContext): Establish<RunCreate> {
  return async ({ connection, location, create, read, transact, configure }) => {
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
      // A fresh file holds nothing to leave as found: it is switched to WAL
      // (and its durability) before the schema is written, so the creating
      // commit costs what a step's does instead of a rollback journal's syncs.
      await configure(found);
      await transact(async (tx) => {
        const again = await recognize(tx, SCHEMA_V1, location);
        if (again.kind === "fresh") {
          await tx.savepoint((sp) => createRun(sp, create, context, connection.remote === true));
        }
        // Another process may have created it first: check what is there either way.
        await checkSingletons(tx, location, create);
      });
      return;
    }
    await configure(found);
  };
}

/**
 * The run database's creation for a driver that stages (port/staged-file.ts):
 * the same statements as `establishRun`'s creation in place, so the same
 * bytes, on a database no one else sees until it is placed whole. `shared`
 * is the part every run's file holds alike (the schema, the identity row, the
 * empty root), written first; `each` the rest, the run's own row and
 * user_version — so a driver that places copies builds `shared` once per
 * store (connection/staged-template.ts).
 */
export function initializeRun(context: RunContext): Initialize<RunCreate> {
  return {
    shared: (tx) => createSharedRun(tx, false),
    // Bad input refused before the run's row, as in place before anything.
    each: (tx, create) => createOwnRun(tx, create, validateCreate(create), context),
  };
}

/** Refuses a malformed create request before any file is touched. */
export function validateCreate(create: RunCreate): string | null {
  checkNames(create, ["workflowId", "runId", "definition"], "create");
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

/** A run's creation in place: the part every run shares, then its own; bad input refused first. */
async function createRun(
  tx: WriteScope,
  create: RunCreate,
  context: RunContext,
  remote: boolean,
): Promise<void> {
  const definition = validateCreate(create);
  await createSharedRun(tx, remote);
  await createOwnRun(tx, create, definition, context);
}

/** What every run's file holds alike: the schema, its identity row and the empty root's node. */
async function createSharedRun(tx: WriteScope, remote: boolean): Promise<void> {
  await createObjects(
    tx,
    SCHEMA_V1,
    async () => {
      await tx.execute(
        "INSERT INTO runledger_identity (application_id, format, version, encoding) VALUES (?, ?, ?, ?)",
        [APPLICATION_ID, "runledger run database", RUN_SCHEMA_VERSION, WORKSPACE_ENCODING_V1],
      );
      await insertObjects(tx, nodeRows([EMPTY_NODE]));
    },
    { remote },
  );
}

/** What is a run's own: its row (`definition` as `validateCreate` gave it), then user_version, the creation's last write. */
async function createOwnRun(
  tx: WriteScope,
  create: RunCreate,
  definition: string | null,
  context: RunContext,
): Promise<void> {
  const now = context.clock();
  await tx.execute(
    `INSERT INTO run (singleton, workflow_id, run_id, definition, status, created_at, updated_at)
VALUES (1, ?, ?, ?, 'running', ?, ?)`,
    [create.workflowId, create.runId, definition, now, now],
  );
  await finishSchema(tx, SCHEMA_V1);
}

/**
 * The rows a version-1 file must hold beyond its schema, read in one
 * statement: the run row, the identity row with the workspace encoding the
 * file was written in, the current-root row and the root it names — an
 * object, or held by the newest event itself. The recognized schema lets
 * each singleton table hold at most one row (its key must be 1), so a
 * well-formed file returns exactly one row here; it reads primary-key
 * lookups and the newest event, O(1), never O(data).
 */
const SINGLETONS = `SELECT r.workflow_id, r.run_id, i.encoding
FROM run AS r, runledger_identity AS i, workspace_current AS c
WHERE r.singleton = 1 AND i.application_id = ${APPLICATION_ID}
  AND (${objectStored("c.root_id")}
    OR (SELECT root_node FROM journal ORDER BY sequence DESC LIMIT 1) IS NOT NULL)`;

/** Only when SINGLETONS found nothing: which of the rows is missing, to say so. */
const MISSING_SINGLETONS = `SELECT (SELECT count(*) FROM run) AS runs,
(SELECT count(*) FROM runledger_identity) AS identities`;

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
  // Before the run's identity: a file of another encoding is refused for that, whoever asks.
  if (row.encoding !== WORKSPACE_ENCODING_V1) {
    throw encodingMismatch(SCHEMA_V1, location, String(row.encoding));
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
      : Number(counts?.identities ?? 0) === 0
        ? "it has no identity row"
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
