/**
 * What changed between two points of the run: each side a journal sequence
 * (the root that event recorded) or a root id (or a prefix of 8+ hex
 * digits), the files added, removed and modified in path order. A click on
 * a path opens it on the side where it exists.
 */
import { api } from "./api.js";
import { el, failureNote, fill, formatBytes, heading } from "./dom.js";
import { writeState } from "./state.js";

const LETTER = { added: "A", removed: "D", modified: "M" };

function sizes(change) {
  return [change.before?.size, change.after?.size]
    .filter((size) => size !== undefined)
    .map(formatBytes)
    .join(" → ");
}

/** A changed path's row: its letter, the path (a click opens it), its sizes. */
function changeRow(change, open) {
  return el(
    "tr",
    { class: `change-${change.change}`, "data-path": change.path, "data-change": change.change },
    el("td", { class: "letter", text: LETTER[change.change], title: change.change }),
    el(
      "td",
      {},
      el("button", {
        type: "button",
        class: "link",
        text: change.path,
        on: { click: () => open(change) },
      }),
    ),
    el("td", { class: "muted", text: sizes(change) }),
  );
}

/** A diff's answer in `result`: how many files differ, their rows, and a note when it was cut. */
function drawDiff(result, diff, open) {
  const rows = diff.changes.map((change) => changeRow(change, open));
  const count = `${diff.changes.length}${diff.truncated ? "+" : ""} file(s) differ`;
  fill(
    result,
    el("p", {
      id: "diff-count",
      class: "muted",
      text: diff.changes.length === 0 ? "no file differs" : count,
    }),
    rows.length === 0 ? null : el("table", { class: "changes" }, el("tbody", {}, ...rows)),
    diff.truncated
      ? el("p", {
          class: "muted",
          text: "only the first files are listed; `runledger diff` lists them all",
        })
      : null,
  );
}

/** Builds the diff section; answers `compare(from, to)`, which fills the form and shows the diff. */
export function renderDiff(section, { key, onOpenFile }) {
  const from = el("input", {
    id: "diff-from",
    name: "from",
    size: 14,
    placeholder: "seq or root",
    "aria-label": "from",
  });
  const to = el("input", {
    id: "diff-to",
    name: "to",
    size: 14,
    placeholder: "seq or root",
    "aria-label": "to",
  });
  const result = el("div", { id: "diff-result" });
  let asked = 0;
  const form = el(
    "form",
    { class: "diff-form" },
    el("label", {}, "from ", from),
    el("label", {}, " to ", to),
    " ",
    el("button", { type: "submit", id: "diff-show", text: "show diff" }),
  );

  async function show() {
    if (from.value.trim() === "" || to.value.trim() === "") {
      fill(
        result,
        el("p", { class: "muted", text: "name two events (sequences) or roots to compare" }),
      );
      return;
    }
    writeState({ from: from.value.trim(), to: to.value.trim() });
    const mine = ++asked;
    let diff;
    try {
      diff = await api("/api/diff", { run: key, from: from.value.trim(), to: to.value.trim() });
    } catch (error) {
      if (mine === asked) fill(result, failureNote(error));
      return;
    }
    // Only the last diff asked for is drawn.
    if (mine !== asked) return;
    const open = (change) =>
      change.change === "removed"
        ? onOpenFile(change.path, diff.from.root)
        : onOpenFile(change.path, diff.to.root);
    drawDiff(result, diff, open);
  }

  form.addEventListener("submit", (event) => {
    event.preventDefault();
    show();
  });
  fill(section, heading("Diff"), form, result);
  return {
    compare(a, b) {
      from.value = a ?? "";
      to.value = b ?? "";
      return show();
    },
  };
}
