/**
 * Where a thread's run lives. One run database per thread: the file name is
 * the thread id itself when that is already a safe, short name, and otherwise
 * a readable part of it plus a digest of the whole id, so that any id — with
 * slashes, dots, non-Latin text or 10,000 characters — maps to one file name
 * that no other id maps to.
 */
import { createHash } from "node:crypto";

const PLAIN = /^[a-z0-9_-]{1,64}$/;
const UNSAFE = /[^a-zA-Z0-9_-]+/g;
const READABLE_MAX = 48;

/** The file name (without directory) of the run holding `threadId`'s checkpoints. */
export function threadFileName(threadId: string): string {
  if (PLAIN.test(threadId)) return `${threadId}.db`;
  const readable = threadId.replace(UNSAFE, "_").slice(0, READABLE_MAX);
  return `${readable}~${sha256(threadId).slice(0, 16)}.db`;
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
