/**
 * One workspace file: text as text, JSON pretty-printed, anything else as
 * its size and a hex head. Only the file's head comes with the view (the
 * server reads no further); the whole file is a download, streamed.
 */
import { api, routeUrl } from "./api.js";
import { el, failureNote, fill, formatBytes, heading, shortId } from "./dom.js";

/** Rows of 16 bytes: offset, hex pairs, and the printable characters. */
function hexDump(hex) {
  const lines = [];
  for (let offset = 0; offset * 2 < hex.length; offset += 16) {
    const bytes = hex.slice(offset * 2, (offset + 16) * 2).match(/../g) ?? [];
    const chars = bytes
      .map((pair) => {
        const code = Number.parseInt(pair, 16);
        return code >= 0x20 && code < 0x7f ? String.fromCharCode(code) : ".";
      })
      .join("");
    lines.push(`${offset.toString(16).padStart(8, "0")}  ${bytes.join(" ").padEnd(47)}  ${chars}`);
  }
  return lines.join("\n");
}

function contentOf(file) {
  if (file.view === "json") {
    return el("pre", {
      id: "file-content",
      class: "json",
      text: JSON.stringify(JSON.parse(file.text), null, 2),
    });
  }
  if (file.view === "text") return el("pre", { id: "file-content", text: file.text });
  return el(
    "div",
    {},
    el("p", {
      id: "file-binary",
      text: `binary, ${file.size.toLocaleString("en-US")} bytes; the first ${file.hex.length / 2}:`,
    }),
    el("pre", { id: "file-content", class: "hex", text: hexDump(file.hex) }),
  );
}

/** Counts the files asked for, so only the last one asked is drawn. */
let latest = 0;

export async function renderFile(section, { key, root, path }) {
  const mine = ++latest;
  section.hidden = false;
  let file;
  try {
    file = await api("/api/file", { run: key, root, path });
  } catch (error) {
    if (mine === latest) fill(section, heading("File"), failureNote(error));
    return;
  }
  if (mine !== latest) return;
  const download = el("a", {
    id: "file-download",
    href: routeUrl("/api/raw", { run: key, root: file.root, path: file.path }),
    download: file.path.split("/").at(-1),
    text: "download",
  });
  fill(
    section,
    heading("File", download),
    el(
      "p",
      { id: "file-facts" },
      el("code", { id: "file-path", text: file.path }),
      ` — ${formatBytes(file.size)}, sha-256 `,
      el("code", { text: shortId(file.digest), title: file.digest }),
      `, at root `,
      el("code", { text: shortId(file.root), title: file.root }),
    ),
    contentOf(file),
    file.truncated && file.view !== "binary"
      ? el("p", {
          class: "muted",
          text: `the first ${formatBytes(file.shown)} of ${formatBytes(file.size)} shown; download it for the rest`,
        })
      : null,
  );
}
