/**
 * `runledger log`: the journal as an operator reads it, one event per line,
 * streamed so a long journal never sits whole in memory.
 */
import type { JournalEvent, RunSnapshot } from "@runledger/core";
import { describeError, EXIT_FAILED, EXIT_OK, iso, type Output, short, write } from "./output.js";
import { readRun } from "./store.js";

/** Events fetched per statement when --limit bounds the read. */
const PAGE = 500;

export interface LogOptions {
  readonly after?: number;
  readonly limit?: number;
  /** Print every record whole (plain output shortens one longer than RECORD_MAX). */
  readonly full?: boolean;
}

/** The characters of a record a plain line shows before it is cut (with --full, all). */
export const RECORD_MAX = 200;

/**
 * One event on one line: sequence, time, the root it recorded, its key, its
 * record — cut after RECORD_MAX characters, saying how long it was, unless `full`.
 */
export function eventLine(event: JournalEvent, full = false): string {
  const key = event.key === null ? "" : `  key ${event.key}`;
  const text = JSON.stringify(event.record);
  const record =
    full || text.length <= RECORD_MAX
      ? text
      : `${text.slice(0, RECORD_MAX)}… (${text.length.toLocaleString("en-US")} characters; --full prints it)`;
  return `${String(event.sequence).padStart(4)}  ${iso(event.writtenAt)}  root ${short(event.rootId)}${key}  ${record}`;
}

/**
 * Prints journal events in sequence order, streamed a page at a time. With
 * --json, stdout is one JSON document even when reading fails midway (a
 * damaged event): the array is closed, an `error` member names the failure,
 * and its code goes to stderr too, with exit 1.
 */
export async function log(file: string, options: LogOptions, output: Output): Promise<number> {
  const after = options.after ?? 0;
  let opened = false;
  let count = 0;
  try {
    await readRun(file, (lease) =>
      lease.read(async (r) => {
        if (output.json) {
          await write(process.stdout, `{\n  "file": ${JSON.stringify(file)},\n  "events": [`);
          opened = true;
        }
        for await (const event of events(r, after, options.limit)) {
          if (output.json) {
            await write(process.stdout, `${count === 0 ? "" : ","}\n    ${JSON.stringify(event)}`);
          } else {
            await write(process.stdout, `${eventLine(event, options.full === true)}\n`);
          }
          count++;
        }
      }),
    );
  } catch (error) {
    if (!opened) throw error;
    const { code, message } = describeError(error);
    const failure = JSON.stringify({ code, message });
    await write(process.stdout, `${count === 0 ? "" : "\n  "}],\n  "error": ${failure}\n}\n`);
    await write(process.stderr, `runledger: ${code}: ${message}\n`);
    return EXIT_FAILED;
  }
  if (output.json) await write(process.stdout, `${count === 0 ? "" : "\n  "}]\n}\n`);
  return EXIT_OK;
}

/** The events after `after`, at most `limit` of them, read a page at a time. */
async function* events(
  r: RunSnapshot,
  after: number,
  limit: number | undefined,
): AsyncGenerator<JournalEvent> {
  if (limit === 0) return;
  // A bounded read asks for no bigger page than it needs.
  const pageSize = limit === undefined ? undefined : Math.min(limit, PAGE);
  let left = limit ?? Number.POSITIVE_INFINITY;
  for await (const event of r.journal.stream(
    pageSize === undefined ? { after } : { after, pageSize },
  )) {
    yield event;
    if (--left === 0) return;
  }
}
