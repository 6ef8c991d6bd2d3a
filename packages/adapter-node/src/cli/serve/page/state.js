/**
 * What the page shows, kept in the address's #fragment (run, event, file,
 * filter, page, diff), so a reload — or a link — shows the same place again
 * with whatever the run holds by then.
 */

export function readState() {
  return Object.fromEntries(new URLSearchParams(window.location.hash.slice(1)));
}

/** Sets (or, for null and undefined, removes) entries without adding a history step. */
export function writeState(changes) {
  const params = new URLSearchParams(window.location.hash.slice(1));
  for (const [name, value] of Object.entries(changes)) {
    if (value === undefined || value === null) params.delete(name);
    else params.set(name, String(value));
  }
  window.history.replaceState(null, "", `#${params}`);
}

/** The fragment of a link to one run of a directory. */
export function runLink(key) {
  return `#${new URLSearchParams({ run: key })}`;
}
