/**
 * Building the page's elements, and the small formats every view shares
 * (sizes, times, ids, stop reasons, failures). Text always goes in as text,
 * never as markup: whatever a run holds is shown, never run.
 */

/**
 * An element: `props` sets attributes (`class`, `id`, `data-*`, …), `text`
 * its text, `on` its listeners; children are elements or strings.
 */
export function el(tag, props = {}, ...children) {
  const node = document.createElement(tag);
  for (const [name, value] of Object.entries(props)) {
    if (value === undefined || value === null || value === false) continue;
    if (name === "text") node.textContent = String(value);
    else if (name === "on") {
      for (const [event, listener] of Object.entries(value)) node.addEventListener(event, listener);
    } else node.setAttribute(name, value === true ? "" : String(value));
  }
  for (const child of children.flat()) {
    if (child === undefined || child === null || child === false) continue;
    node.append(typeof child === "string" ? document.createTextNode(child) : child);
  }
  return node;
}

/** Empties a node and puts `children` in it. */
export function fill(node, ...children) {
  node.replaceChildren();
  for (const child of children.flat()) if (child) node.append(child);
  return node;
}

export function formatBytes(bytes) {
  if (bytes < 1024) return `${bytes} B`;
  if (bytes < 1024 * 1024) return `${(bytes / 1024).toFixed(1)} KiB`;
  return `${(bytes / (1024 * 1024)).toFixed(1)} MiB`;
}

export function formatTime(ms) {
  return new Date(ms).toISOString().replace("T", " ").replace("Z", " UTC");
}

/** The first 12 hex digits of an id, as the CLI prints them. */
export function shortId(id) {
  return id.slice(0, 12);
}

/** A stop reason in words (as `runledger inspect` says it). */
export function describeStop(reason) {
  if (reason === null) return "no stop reason";
  if ("event" in reason) return `stopped by journal event ${reason.event}`;
  return `stopped by host ${reason.host}, code ${reason.code}`;
}

/** A failure as the page shows it: its code, then what the server said. */
export function failureNote(error) {
  return el(
    "p",
    { class: "failure", role: "alert" },
    el("code", { text: error.code ?? "internal_error" }),
    ` ${error.message}`,
  );
}

/** A section heading with optional controls beside it. */
export function heading(text, ...controls) {
  return el("div", { class: "heading" }, el("h2", { text }), ...controls);
}
