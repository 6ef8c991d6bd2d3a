/**
 * Where a thread's run lives. One run database per thread: the file name is
 * the thread id itself when that is already a safe, short name, and otherwise
 * a readable part of it plus a digest of the whole id, so that any id — with
 * slashes, dots, non-Latin text or 10,000 characters — maps to one file name
 * that no other id maps to. On a libSQL server a run is a database named by
 * the first label of its host (a namespace), which allows less than a file
 * name does: `threadNamespace` gives such a label, by the same rule.
 */
import { createHash } from "node:crypto";

const PLAIN = /^[a-z0-9_-]{1,64}$/;
const UNSAFE = /[^a-zA-Z0-9_-]+/g;
const READABLE_MAX = 48;
/** A thread id that is a host label already: letters, digits, single hyphens inside. */
const PLAIN_LABEL = /^(?!.*--)[a-z0-9](?:[a-z0-9-]{0,38}[a-z0-9])?$/;
const UNSAFE_LABEL = /[^a-z0-9]+/g;
const READABLE_LABEL_MAX = 24;

/** The file name (without directory) of the run holding `threadId`'s checkpoints. */
export function threadFileName(threadId: string): string {
  if (PLAIN.test(threadId)) return `${threadId}.db`;
  const readable = threadId.replace(UNSAFE, "_").slice(0, READABLE_MAX);
  return `${readable}~${sha256(threadId).slice(0, 16)}.db`;
}

/**
 * The database name (namespace) of `threadId`'s run on a libSQL server: a
 * host label of at most 63 characters (lower-case letters, digits, hyphens).
 * The thread id itself when it is one of at most 40 characters with no
 * `--`; otherwise a readable part, `--`, and 16 hex digits of the id's
 * SHA-256 — a plain id never holds `--`, so no two ids share a name.
 */
export function threadNamespace(threadId: string): string {
  if (PLAIN_LABEL.test(threadId)) return threadId;
  const readable = threadId
    .toLowerCase()
    .replace(UNSAFE_LABEL, "-")
    .replace(/^-+|-+$/g, "")
    .slice(0, READABLE_LABEL_MAX)
    .replace(/-+$/, "");
  return `${readable === "" ? "t" : readable}--${sha256(threadId).slice(0, 16)}`;
}

/** The location of `threadId`'s run below `directory` ("" for the working directory). */
export function threadLocation(directory: string, threadId: string): string {
  const name = threadFileName(threadId);
  if (directory === "") return name;
  return directory.endsWith("/") ? `${directory}${name}` : `${directory}/${name}`;
}

export function sha256(text: string): string {
  return createHash("sha256").update(text, "utf8").digest("hex");
}
