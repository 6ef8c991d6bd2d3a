/**
 * The journal's part of `verify`: a gap-free journal whose event ids are
 * unique, whose digest chain holds (./chain.ts), and whose every held root
 * — the bytes an event keeps of the root it records — hashes to that root's
 * id. (The workspace checks what those roots reach.)
 */
import { sameBytes, toHex } from "../port/bytes.js";
import type { Executor } from "../port/driver.js";
import type { HashFunctions } from "../port/hash.js";
import { checkChain } from "./chain.js";

const RANGE = "SELECT count(*) AS n, min(sequence) AS lo, max(sequence) AS hi FROM journal";
/**
 * Event ids used twice. Core makes each unique by construction, so the
 * schema keeps no index on them (a step would pay a page a commit for it);
 * only a writer that bypassed core can repeat one, and this finds it.
 */
const REPEATED_EVENT_IDS = `SELECT event_id, count(*) AS n FROM journal
GROUP BY event_id HAVING count(*) > 1 ORDER BY event_id`;
/** Each root an event holds, once per distinct bytes held for it. */
const HELD_ROOTS = "SELECT DISTINCT root_id, root_node FROM journal WHERE root_node IS NOT NULL";

/** How many events the journal holds and what is wrong with them (none: empty). */
export interface JournalCheck {
  readonly events: number;
  readonly problems: string[];
}

/** Checks the journal's rows: its sequence, its event ids and its chain. */
export async function checkJournal(reader: Executor, hash: HashFunctions): Promise<JournalCheck> {
  const problems: string[] = [];
  const range = (await reader.execute(RANGE)).rows[0]!;
  const events = Number(range.n);
  if (events > 0 && Number(range.hi) - Number(range.lo) + 1 !== events) {
    problems.push(
      `journal: ${events} events between ${range.lo} and ${range.hi}: the sequence has gaps`,
    );
  }
  for (const row of (await reader.execute(REPEATED_EVENT_IDS)).rows) {
    problems.push(
      `journal: event id ${String(row.event_id)} is used by ${String(row.n)} events (an event id is unique)`,
    );
  }
  await checkChain(reader, hash, problems);
  return { events, problems };
}

/** Every root an event holds, whichever event: its bytes must hash to the id the event records. */
export async function checkHeldRoots(reader: Executor, hash: HashFunctions): Promise<string[]> {
  const problems: string[] = [];
  for (const row of (await reader.execute(HELD_ROOTS)).rows) {
    const id = row.root_id as Uint8Array;
    if (!sameBytes(hash.sha256(row.root_node as Uint8Array), id)) {
      problems.push(`root ${toHex(id)}: held in the journal, its bytes do not hash to its id`);
    }
  }
  return problems;
}
