/**
 * The page's entry: asks the server what it shows (one run, or a
 * directory of them), then draws the runs list or one run — its summary,
 * timeline, workspace tree, file and diff — from the state in the address,
 * so a reload shows the same place with the run as it is now.
 */
import { api } from "./api.js";
import { renderDiff } from "./diff-view.js";
import { failureNote, fill } from "./dom.js";
import { renderFile } from "./file-view.js";
import { renderRuns } from "./runs-view.js";
import { readState, writeState } from "./state.js";
import { renderSummary } from "./summary-view.js";
import { renderTimeline } from "./timeline-view.js";
import { renderTree } from "./tree-view.js";

const $ = (id) => document.getElementById(id);

function showFailure(error) {
  const target = $("failure");
  target.hidden = false;
  fill(target, ...failureNote(error).childNodes);
}

async function renderRun(key) {
  $("runs").hidden = true;
  $("run").hidden = false;
  const state = readState();
  const summary = await renderSummary($("summary"), key);
  const openFile = (path, root) => {
    writeState({ path, fileRoot: root });
    return renderFile($("file"), { key, root, path });
  };
  const diff = renderDiff($("diff"), { key, onOpenFile: openFile });
  const showEvent = (event) =>
    renderTree($("tree"), {
      key,
      root: event?.rootId,
      label: event === undefined ? "the current root" : `after event ${event.sequence}`,
      record: event?.record,
      onOpenFile: openFile,
    });
  const select = (event) => {
    writeState({ event: event.sequence, root: event.rootId });
    showEvent(event);
    if (event.sequence > 1) diff.compare(String(event.sequence - 1), String(event.sequence));
  };
  await renderTimeline($("timeline"), {
    key,
    total: summary.counts.events,
    selected: state.event === undefined ? undefined : Number(state.event),
    onSelect: select,
  });
  const chosen =
    state.event === undefined
      ? undefined
      : { sequence: Number(state.event), rootId: state.root, record: undefined };
  await showEvent(chosen);
  if (state.from !== undefined || state.to !== undefined) await diff.compare(state.from, state.to);
  else fill($("diff-result"));
  if (state.path === undefined) $("file").hidden = true;
  else await renderFile($("file"), { key, root: state.fileRoot, path: state.path });
}

async function render() {
  $("failure").hidden = true;
  try {
    const source = await api("/api/source");
    $("source").textContent = source.path;
    const state = readState();
    if (source.mode === "file") return await renderRun(source.runs[0].key);
    if (state.run !== undefined) return await renderRun(state.run);
    $("run").hidden = true;
    $("runs").hidden = false;
    renderRuns($("runs"), source);
  } catch (error) {
    showFailure(error);
  }
}

$("refresh").addEventListener("click", render);
window.addEventListener("hashchange", render);
render();
