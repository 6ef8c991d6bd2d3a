/**
 * The journal as the page's timeline reads it: one page of events at a
 * time, forwards from a sequence or backwards from one, optionally only the
 * events of one kind (the `kind` field of their record), with whether more
 * lie on either side. Events are streamed, never read whole, so a long
 * journal costs one page plus the scan to the next match.
 */
import type { JournalEvent, JsonValue, RunSnapshot } from "@runledger/core";

/** Which events a page holds: after a sequence (oldest first) or before one (still shown oldest first). */
export interface PageRequest {
  readonly after?: number;
  readonly before?: number;
  readonly limit: number;
  /** Only events whose record's `kind` is this ("" for records without a string kind). */
  readonly kind?: string;
}

export interface JournalPage {
  readonly events: JournalEvent[];
  /** Whether a matching event lies before the first of the page, or after its last. */
  readonly older: boolean;
  readonly newer: boolean;
}

/** An event's kind as the timeline groups it: its record's `kind`, or "" when that is no string. */
function kindOf(event: JournalEvent): string {
  const kind: JsonValue | undefined = event.record.kind;
  return typeof kind === "string" ? kind : "";
}

/** Up to `limit` matching events streamed in one direction, and whether one more follows. */
async function collect(
  events: AsyncIterable<JournalEvent>,
  limit: number,
  matches: (event: JournalEvent) => boolean,
): Promise<{ events: JournalEvent[]; more: boolean }> {
  const found: JournalEvent[] = [];
  for await (const event of events) {
    if (!matches(event)) continue;
    if (found.length === limit) return { events: found, more: true };
    found.push(event);
  }
  return { events: found, more: false };
}

export async function journalPage(r: RunSnapshot, request: PageRequest): Promise<JournalPage> {
  const { kind, limit } = request;
  const matches = (event: JournalEvent) => kind === undefined || kindOf(event) === kind;
  const pageSize = Math.min(Math.max(limit + 1, 50), 500);
  const any = async (bound: { after: number } | { before: number }) =>
    (await collect(r.journal.stream({ ...bound, pageSize: 50 }), 0, matches)).more;
  if (request.before !== undefined) {
    const back = await collect(
      r.journal.stream({ before: request.before, order: "desc", pageSize }),
      limit,
      matches,
    );
    const events = back.events.reverse();
    const last = events.at(-1)?.sequence ?? request.before - 1;
    return { events, older: back.more, newer: await any({ after: last }) };
  }
  const after = request.after ?? 0;
  const forth = await collect(r.journal.stream({ after, pageSize }), limit, matches);
  const first = forth.events[0]?.sequence ?? after + 1;
  return { events: forth.events, older: await any({ before: first }), newer: forth.more };
}

/** Every kind the journal holds, with how many events have it, in order of first appearance. */
export async function journalKinds(r: RunSnapshot): Promise<{ kind: string; count: number }[]> {
  const counts = new Map<string, number>();
  for await (const event of r.journal.stream()) {
    const kind = kindOf(event);
    counts.set(kind, (counts.get(kind) ?? 0) + 1);
  }
  return [...counts].map(([kind, count]) => ({ kind, count }));
}
