/**
 * The journal as a timeline: one page of events at a time (oldest first),
 * filtered by event kind, with first / previous / next / last pages. A
 * click on an event hands it to the run view, which shows the workspace
 * at the root that event recorded.
 */
import { api } from "./api.js";
import { el, failureNote, fill, formatTime, heading, shortId } from "./dom.js";
import { readState, writeState } from "./state.js";

const PAGE_SIZES = [10, 25, 50, 100];
const RECORD_SHOWN = 100;
/** Above every sequence: `before` this is the last page. */
const END = Number.MAX_SAFE_INTEGER;

/** The kind an event is grouped under (its record's `kind`, "" for none), as the server groups it. */
function kindOf(event) {
  return typeof event.record.kind === "string" ? event.record.kind : "";
}

/** The record without its kind, on one line, cut to fit a row. */
function recordLine(record) {
  const { kind: _kind, ...rest } = record;
  const text = JSON.stringify(rest);
  return text.length <= RECORD_SHOWN ? text : `${text.slice(0, RECORD_SHOWN)}…`;
}

/** "21:14:25.890": the time of day (UTC) an event was written; the date is in its title. */
function timeOfDay(ms) {
  return new Date(ms).toISOString().slice(11, 23);
}

function kindLabel(kind) {
  return kind === "" ? "(no kind)" : kind;
}

/** Where the page starts, from the state: after a sequence, or before one. */
function positionOf(state) {
  if (state.before !== undefined) return { before: Number(state.before) };
  return { after: Number(state.after ?? 0) };
}

/** The events table: a header row, and `rows` for the page's events. */
function eventsTable(rows) {
  const names = ["seq", "time", "kind", "record", "root"];
  return el(
    "table",
    { class: "events" },
    el("thead", {}, el("tr", {}, ...names.map((name) => el("th", { text: name })))),
    rows,
  );
}

/** An event's row; a click (or Enter) on it calls `choose(event, row)`. */
function eventRow(event, isChosen, choose) {
  const tr = el(
    "tr",
    {
      class: isChosen ? "selected" : undefined,
      tabindex: 0,
      "data-sequence": event.sequence,
      "data-kind": kindOf(event),
      on: {
        click: () => choose(event, tr),
        keydown: (e) => {
          if (e.key === "Enter") choose(event, tr);
        },
      },
    },
    el("td", { class: "seq", text: event.sequence }),
    el("td", {
      class: "time",
      text: timeOfDay(event.writtenAt),
      title: formatTime(event.writtenAt),
    }),
    el("td", { class: "kind", text: kindLabel(kindOf(event)) }),
    el("td", { class: "record", text: recordLine(event.record) }),
    el("td", {}, el("code", { text: shortId(event.rootId) })),
  );
  return tr;
}

/** Fills the kind filter with the run's event kinds and their counts; `kind` stays chosen. */
function listKinds(kindFilter, key, kind, failure) {
  api("/api/kinds", { run: key }).then(
    ({ kinds }) => {
      for (const entry of kinds) {
        kindFilter.append(
          el("option", {
            value: entry.kind,
            text: `${kindLabel(entry.kind)} (${entry.count})`,
            selected: entry.kind === kind,
          }),
        );
      }
    },
    (error) => fill(failure, failureNote(error)),
  );
}

/** The page-size choice, `limit` chosen. */
function pageSizeChoice(limit) {
  return el(
    "select",
    { id: "page-size", "aria-label": "events per page" },
    ...PAGE_SIZES.map((size) =>
      el("option", { value: size, text: `${size} a page`, selected: size === limit }),
    ),
  );
}

/** The page's events as rows (or a row saying there are none). */
function drawRows(rows, events, chosen, choose) {
  fill(rows, ...events.map((event) => eventRow(event, event.sequence === chosen, choose)));
  if (events.length === 0) {
    rows.append(el("tr", {}, el("td", { colspan: 5, class: "muted", text: "no events here" })));
  }
}

/** "3–12": the sequences a page spans ("none" when empty). */
function spanOf(events) {
  return events.length === 0 ? "none" : `${events[0].sequence}–${events.at(-1).sequence}`;
}

/** The timeline in `section`: a page of events, the kind filter, the page size and the pager. */
export function renderTimeline(section, { key, total, selected, onSelect }) {
  const state = readState();
  let kind = state.kind;
  let limit = PAGE_SIZES.includes(Number(state.limit)) ? Number(state.limit) : 25;
  let position = positionOf(state);
  let page;
  let chosen = selected;

  const kindFilter = el("select", { id: "kind-filter", "aria-label": "event kind" });
  kindFilter.append(el("option", { value: "*", text: `all kinds (${total})` }));
  const pageSize = pageSizeChoice(limit);
  const rows = el("tbody");
  const where = el("span", { id: "page-position", class: "muted" });
  // Disabled until the first page says which way more events lie.
  const button = (id, text, move) =>
    el("button", { type: "button", id, text, disabled: true, on: { click: () => go(move()) } });
  const first = button("page-first", "« first", () => ({ after: 0 }));
  // An empty page (past the end, say) still pages from where it stands.
  const previous = button("page-previous", "‹ previous", () => ({
    before: page.events[0]?.sequence ?? (position.after ?? 0) + 1,
  }));
  const next = button("page-next", "next ›", () => ({
    after: page.events.at(-1)?.sequence ?? (position.before ?? 1) - 1,
  }));
  const last = button("page-last", "last »", () => ({ before: END }));
  const failure = el("div");

  fill(
    section,
    heading("Timeline", kindFilter, pageSize),
    failure,
    eventsTable(rows),
    el("div", { class: "pager" }, first, previous, where, next, last),
  );

  let asked = 0;
  async function go(to) {
    const mine = ++asked;
    let answer;
    try {
      answer = await api("/api/journal", { run: key, limit, kind, ...to });
    } catch (error) {
      if (mine === asked) fill(failure, failureNote(error));
      return;
    }
    // Only the page asked for last is drawn.
    if (mine !== asked) return;
    position = to;
    page = answer;
    fill(failure);
    const choose = (event, tr) => {
      chosen = event.sequence;
      for (const other of rows.children) other.classList.toggle("selected", other === tr);
      onSelect(event);
    };
    drawRows(rows, page.events, chosen, choose);
    where.textContent = `events ${spanOf(page.events)}`;
    first.disabled = previous.disabled = !page.older;
    next.disabled = last.disabled = !page.newer;
    writeState({
      kind: kind ?? null,
      limit,
      after: position.after ?? null,
      before: position.before ?? null,
    });
  }

  kindFilter.addEventListener("change", () => {
    kind = kindFilter.value === "*" ? undefined : kindFilter.value;
    go({ after: 0 });
  });
  pageSize.addEventListener("change", () => {
    limit = Number(pageSize.value);
    go({ after: 0 });
  });
  listKinds(kindFilter, key, kind, failure);
  return go(position);
}
