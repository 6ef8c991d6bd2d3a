/**
 * The run at a glance: which run, its status and stop reason, what the
 * file holds, and what the deep check (verify) found — that last one read
 * after the rest is shown, since it re-hashes everything the run stores.
 */
import { api } from "./api.js";
import { describeStop, el, failureNote, fill, formatTime, heading } from "./dom.js";

function row(name, ...value) {
  return [el("dt", { text: name }), el("dd", {}, ...value)];
}

async function showVerify(target, key) {
  fill(target, el("span", { class: "muted", text: "checking…" }));
  try {
    const report = await api("/api/verify", { run: key });
    const { counts } = report;
    const tally = `${counts.events} events, ${counts.objects} objects, ${counts.chunks} pieces, ${counts.roots} roots`;
    if (report.ok) {
      fill(target, el("span", { class: "ok", text: "ok" }), ` (${tally})`);
      return;
    }
    fill(
      target,
      el("span", { class: "bad", text: `FAILED: ${report.problems.length} problem(s)` }),
      ` (${tally})`,
      el(
        "ul",
        { class: "problems" },
        ...report.problems.map((problem) => el("li", { text: problem })),
      ),
    );
  } catch (error) {
    fill(target, failureNote(error));
  }
}

/** Shows the run's summary in `section`; resolves to it (the timeline needs its counts). */
export async function renderSummary(section, key) {
  const summary = await api("/api/run", { run: key });
  const { run, counts } = summary;
  const verify = el("span", { id: "verify" });
  const range =
    counts.firstSequence === null ? "" : ` (${counts.firstSequence}–${counts.lastSequence})`;
  fill(
    section,
    heading(`${run.workflowId} / ${run.runId}`),
    el(
      "dl",
      { class: "facts" },
      row("file", summary.file),
      row(
        "status",
        el("span", { id: "status", class: `status status-${run.status}`, text: run.status }),
      ),
      row("stop reason", el("span", { id: "stop-reason", text: describeStop(run.stopReason) })),
      row("verify", verify),
      row("journal", `${counts.events} events${range}`),
      row("workspace", `${counts.objects} objects, ${counts.roots} roots, ${counts.pins} pins`),
      row("current root", el("code", { text: summary.currentRoot })),
      row("updated", formatTime(run.updatedAt)),
    ),
  );
  showVerify(verify, key);
  return summary;
}
