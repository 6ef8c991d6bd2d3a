import type { JournalEvent } from "@runledger/core";
import { EXIT_OK, iso, type Output, short, write } from "./output.js";
import { readRun } from "./store.js";

export interface LogOptions {
  readonly after?: number;
  readonly limit?: number;
}

/** One event on one line: sequence, time, the root it recorded, its key, its record. */
export function eventLine(event: JournalEvent): string {
  const key = event.key === null ? "" : `  key ${event.key}`;
  return `${String(event.sequence).padStart(4)}  ${iso(event.writtenAt)}  root ${short(event.rootId)}${key}  ${JSON.stringify(event.record)}`;
}

/** Prints journal events in sequence order, streamed a page at a time. */
export async function log(file: string, options: LogOptions, output: Output): Promise<number> {
  const after = options.after ?? 0;
  await readRun(file, (lease) =>
    lease.read(async (r) => {
      if (output.json)
        await write(process.stdout, `{\n  "file": ${JSON.stringify(file)},\n  "events": [`);
      let count = 0;
      for await (const event of events(r.journal, after, options.limit)) {
        if (output.json) {
          await write(process.stdout, `${count === 0 ? "" : ","}\n    ${JSON.stringify(event)}`);
        } else {
          await write(process.stdout, `${eventLine(event)}\n`);
        }
        count++;
      }
      if (output.json) await write(process.stdout, `${count === 0 ? "" : "\n  "}]\n}\n`);
    }),
  );
  return EXIT_OK;
}

async function* events(
  journal: {
    list(o: { after: number; limit: number }): Promise<JournalEvent[]>;
    stream(o: { after: number }): AsyncIterable<JournalEvent>;
  },
  after: number,
  limit: number | undefined,
): AsyncGenerator<JournalEvent> {
  if (limit === undefined) {
    yield* journal.stream({ after });
    return;
  }
  // A bounded read, still a page at a time.
  let left = limit;
  let from = after;
  while (left > 0) {
    const page = await journal.list({ after: from, limit: Math.min(left, 500) });
    yield* page;
    if (page.length < Math.min(left, 500)) return;
    left -= page.length;
    from = page[page.length - 1]!.sequence;
  }
}
