/**
 * A directory's runs, newest change first, each a link to its own view;
 * then the files there that are no run this build reads, with why.
 */
import { describeStop, el, fill, formatTime, heading } from "./dom.js";
import { runLink } from "./state.js";

export function renderRuns(section, source) {
  const runs = [...source.runs].sort(
    (a, b) => b.updatedAt - a.updatedAt || a.key.localeCompare(b.key),
  );
  const how =
    source.catalog === null
      ? "found by opening each file"
      : `listed by the catalog ${source.catalog}`;
  fill(
    section,
    heading(`Runs in ${source.path}`),
    el("p", { class: "muted", text: `${runs.length} run(s), ${how}` }),
    el(
      "table",
      { class: "runs" },
      el(
        "thead",
        {},
        el(
          "tr",
          {},
          ...["run file", "workflow / run", "status", "updated", "last seq"].map((name) =>
            el("th", { text: name }),
          ),
        ),
      ),
      el(
        "tbody",
        {},
        ...runs.map((run) =>
          el(
            "tr",
            { "data-key": run.key },
            el("td", {}, el("a", { href: runLink(run.key), text: run.key })),
            el("td", { text: `${run.workflowId} / ${run.runId}` }),
            el(
              "td",
              { title: describeStop(run.stopReason) },
              el("span", { class: `status status-${run.status}`, text: run.status }),
            ),
            el("td", { text: formatTime(run.updatedAt) }),
            el("td", { class: "seq", text: run.lastSequence }),
          ),
        ),
      ),
    ),
    source.skipped.length === 0
      ? null
      : el(
          "details",
          { class: "skipped" },
          el("summary", { text: `${source.skipped.length} file(s) that are no run` }),
          el(
            "ul",
            {},
            ...source.skipped.map((file) =>
              el("li", {}, el("code", { text: file.key }), ` — ${file.code}`),
            ),
          ),
        ),
  );
}
