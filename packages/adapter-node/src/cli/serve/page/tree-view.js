/**
 * The workspace tree at one root: the top directory listed, each
 * subdirectory listed when opened (one request a directory, so a tree of
 * any size opens as fast as its top). A click on a file opens it.
 */
import { api } from "./api.js";
import { el, failureNote, fill, formatBytes, heading, shortId } from "./dom.js";

function entryItem(context, entry) {
  if (entry.kind === "file") {
    return el(
      "li",
      { class: "file", "data-path": entry.path },
      el("button", {
        type: "button",
        class: "link",
        text: entry.name,
        on: { click: () => context.onOpenFile(entry.path, context.root) },
      }),
      el("span", { class: "muted", text: ` ${formatBytes(entry.size)}` }),
    );
  }
  const children = el("ul", { hidden: true });
  let loaded = false;
  const toggle = el("button", {
    type: "button",
    class: "link directory",
    "aria-expanded": "false",
    text: `${entry.name}/`,
    on: {
      click: async () => {
        const open = toggle.getAttribute("aria-expanded") !== "true";
        toggle.setAttribute("aria-expanded", String(open));
        children.hidden = !open;
        if (open && !loaded) {
          loaded = true;
          await listInto(children, context, entry.path);
        }
      },
    },
  });
  return el("li", { class: "dir", "data-path": entry.path }, toggle, children);
}

async function listInto(list, context, directory) {
  try {
    const { entries } = await api("/api/tree", {
      run: context.key,
      root: context.root,
      dir: directory,
    });
    fill(list, ...entries.map((entry) => entryItem(context, entry)));
    if (entries.length === 0) list.append(el("li", { class: "muted", text: "(empty)" }));
  } catch (error) {
    fill(list, el("li", {}, failureNote(error)));
  }
}

/** Counts the trees asked for, so only the last one asked is drawn. */
let latest = 0;

/** Shows the tree at `root` (an event's, or the current one when undefined), titled by `label`. */
export async function renderTree(section, { key, root, label, record, onOpenFile }) {
  const mine = ++latest;
  const top = el("ul", { class: "tree" });
  const shown = await api("/api/tree", { run: key, root }).catch((error) => error);
  // A later click asked for another tree while this one loaded: that one is shown.
  if (mine !== latest) return;
  if (shown instanceof Error) {
    fill(section, heading("Workspace"), failureNote(shown));
    return;
  }
  const context = { key, root: shown.root, onOpenFile };
  fill(
    section,
    heading("Workspace"),
    el(
      "p",
      { id: "tree-at" },
      `${label} — root `,
      el("code", { text: shortId(shown.root), title: shown.root }),
    ),
    record === undefined
      ? null
      : el(
          "details",
          { class: "record" },
          el("summary", { text: "event record" }),
          el("pre", { text: JSON.stringify(record, null, 2) }),
        ),
    top,
  );
  fill(top, ...shown.entries.map((entry) => entryItem(context, entry)));
  if (shown.entries.length === 0)
    top.append(el("li", { class: "muted", text: "(empty workspace)" }));
}
