/**
 * Keyed transactions: `lease.transact(fn, { key })` lands at most once. The
 * owner of the `run_transaction` table: every read and write of it is here.
 *
 * Why a table and not the journal's idempotency keys: a keyed transaction
 * may append no event, or several, and an event's key is the caller's to
 * choose. The key's row is inserted in the very transaction it names, as
 * its last statement, so the row exists exactly when that transaction
 * committed — whatever became of the answer to its COMMIT. A retry after
 * `commit_unknown` (or any failure) first looks the key up under the write
 * lock: found, the work is not run again and the caller is told it landed
 * (`already_landed`, with the sequences it appended); absent, it runs.
 *
 * Two statements a keyed transaction, each a primary-key lookup or insert;
 * an unkeyed one pays nothing.
 */
import { RunledgerError } from "../port/errors.js";
import type { Row } from "../port/values.js";
import type { WriteScope } from "../transaction/scope.js";

/** The longest key, as the table's CHECK has it (the journal's idempotency keys' bound). */
const MAX_KEY_LENGTH = 512;

/** What `transact` takes. */
export interface TransactOptions {
  /**
   * Lands the transaction at most once: its key is recorded in it, and a
   * later call with the same key — a retry after a lost connection, or any
   * second call — runs nothing and fails `already_landed`. 1 to 512 characters.
   */
  readonly key?: string;
  /**
   * On a server, send the transaction in one request where core can: the
   * lease's last view of the run is assumed current, and a step's event and
   * the COMMIT go together, unanswered. If another writer moved the run
   * meanwhile (or the server refused anything else), nothing of it lands and
   * `fn` runs once more the ordinary way, whose outcome is the answer. So
   * `fn` may run twice: it must do nothing outside `tx` that it cannot do
   * twice. A local file ignores it (`fn` runs once). Default false.
   */
  readonly optimistic?: boolean;
}

/** Refuses a key the table would refuse, before a transaction starts. */
export function checkTransactionKey(key: unknown): asserts key is string {
  if (typeof key !== "string" || key.length === 0 || key.length > MAX_KEY_LENGTH) {
    throw new RunledgerError(
      "invalid_argument",
      `transact's key is a string of 1 to ${MAX_KEY_LENGTH} characters; got ${describe(key)}; nothing was written`,
    );
  }
}

/** Refuses an `optimistic` that is not a boolean, before a transaction starts. */
export function checkOptimistic(optimistic: unknown): asserts optimistic is boolean {
  if (typeof optimistic !== "boolean") {
    throw new RunledgerError(
      "invalid_argument",
      `transact's optimistic is true or false; got ${describe(optimistic)}; nothing was written`,
    );
  }
}

/**
 * Under the write lock, before the work: fails `already_landed` when the key
 * landed before, and otherwise answers what `record` needs — the journal's
 * newest sequence as the work starts.
 */
export async function claimKey(scope: WriteScope, key: string): Promise<{ before: number }> {
  const { rows } = await scope.execute(
    `SELECT (SELECT coalesce(max(sequence), 0) FROM journal) AS newest, first_sequence, last_sequence, committed_at
       FROM (SELECT 1) LEFT JOIN run_transaction ON key = ?`,
    [key],
  );
  const row = rows[0] as Row;
  if (row.committed_at !== null && row.committed_at !== undefined) {
    throw alreadyLanded(key, row);
  }
  return { before: Number(row.newest) };
}

/** After the work, as the transaction's last statement: the key, and the sequences the work appended. */
export async function recordKey(
  scope: WriteScope,
  key: string,
  before: number,
  committedAt: number,
): Promise<void> {
  // Its answer is not read: a server may send it with COMMIT (a failure then fails the commit).
  await scope.execute(
    `INSERT INTO run_transaction (key, first_sequence, last_sequence, committed_at)
     SELECT ?, CASE WHEN newest > ? THEN ? END, CASE WHEN newest > ? THEN newest END, ?
       FROM (SELECT coalesce(max(sequence), 0) AS newest FROM journal)`,
    [key, before, before + 1, before, committedAt],
    { later: true },
  );
}

function alreadyLanded(key: string, row: Row): RunledgerError {
  const first = row.first_sequence === null ? null : Number(row.first_sequence);
  const last = row.last_sequence === null ? null : Number(row.last_sequence);
  const committedAt = Number(row.committed_at);
  const wrote =
    first === null
      ? "it appended no event"
      : first === last
        ? `it appended event ${first}`
        : `it appended events ${first} to ${last}`;
  return new RunledgerError(
    "already_landed",
    `the transaction keyed ${JSON.stringify(key)} landed before (${wrote}); it was not run again. ` +
      "A retry after commit_unknown or a lost connection ends here: treat it as done",
    { details: { key, firstSequence: first, lastSequence: last, committedAt } },
  );
}

function describe(value: unknown): string {
  if (typeof value === "string") return `a string of ${value.length} characters`;
  return value === undefined ? "undefined" : typeof value;
}
