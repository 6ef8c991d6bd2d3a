/**
 * What the file view shows of a workspace file without loading it whole:
 * its first bytes, read from the file's stream and no further, and how to
 * show them — as text (UTF-8), as JSON (a whole file that parses, for the
 * page to pretty-print), or, for anything else, as a hex head. The whole
 * file is for the raw route, which streams it.
 */
import { Buffer } from "node:buffer";
import type { RunSnapshot } from "@runledger/core";

/** The bytes of a file the view reads at most. */
const HEAD_BYTES = 64 * 1024;
/** The bytes a binary file's hex head shows. */
const HEX_BYTES = 512;

export interface FileHead {
  readonly path: string;
  readonly root: string;
  readonly size: number;
  readonly digest: string;
  /** "json": `text` is the whole file, parses, and is named .json or holds an object or array; "text": UTF-8; "binary": see `hex`. */
  readonly view: "json" | "text" | "binary";
  /** The head as text ("json", "text"), or "" for a binary file. */
  readonly text: string;
  /** The bytes of the file `text` or `hex` was read from (at most HEAD_BYTES). */
  readonly shown: number;
  /** Whether the file goes on past what is shown. */
  readonly truncated: boolean;
  /** A binary file's first bytes, as hex digits. */
  readonly hex: string;
}

/** The first `limit` bytes of a file, taken from its stream (the rest is never read). */
async function head(r: RunSnapshot, path: string, root: string, limit: number): Promise<Buffer> {
  const parts: Uint8Array[] = [];
  let held = 0;
  for await (const chunk of r.workspace.stream(path, { root })) {
    parts.push(chunk);
    held += chunk.length;
    if (held >= limit) break;
  }
  return Buffer.concat(parts).subarray(0, limit);
}

/** The text of `bytes` if they are UTF-8 without NUL (a character cut at the end allowed), else undefined. */
function asText(bytes: Buffer, cut: boolean): string | undefined {
  if (bytes.includes(0)) return undefined;
  const decoder = new TextDecoder("utf-8", { fatal: true });
  try {
    return decoder.decode(bytes, { stream: cut });
  } catch {
    return undefined;
  }
}

function isJson(text: string): boolean {
  try {
    JSON.parse(text);
    return true;
  } catch {
    return false;
  }
}

export async function fileHead(r: RunSnapshot, path: string, root: string): Promise<FileHead> {
  // stat first: a directory is not_a_file, as read answers, before a byte is read.
  const entry = await r.workspace.stat(path, { root });
  if (entry.kind !== "file") await r.workspace.read(path, { root });
  const size = entry.size!;
  const bytes = await head(r, path, root, HEAD_BYTES);
  const truncated = size > bytes.length;
  const text = asText(bytes, truncated);
  const shown = bytes.length;
  const described = { path: entry.path, root, size, digest: entry.digest!, shown, truncated };
  if (text === undefined) {
    return {
      ...described,
      view: "binary",
      text: "",
      hex: bytes.subarray(0, HEX_BYTES).toString("hex"),
    };
  }
  const json = !truncated && (/\.json$/i.test(path) || /^\s*[[{]/.test(text)) && isJson(text);
  return { ...described, view: json ? "json" : "text", text, hex: "" };
}
