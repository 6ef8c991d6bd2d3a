/**
 * Workspace paths. One rule, checked before anything is written:
 * - relative POSIX: segments joined by "/", no leading or trailing "/";
 * - no empty, "." or ".." segment, no NUL, no control character
 *   (U+0000–U+001F, U+007F–U+009F) and no backslash anywhere;
 * - at most 1024 UTF-8 bytes in all, 255 in one segment, 64 segments deep;
 * - case-sensitive, and already in Unicode NFC: a path whose NFC form
 *   differs is refused rather than silently changed, so one visible name can
 *   never stand for two files;
 * - well-formed Unicode: a lone UTF-16 surrogate has no UTF-8 form, so it
 *   could be neither stored nor hashed as given.
 * A refused path fails with `invalid_path`, naming the path and the rule.
 */
import { RunledgerError } from "../port/errors.js";
import { isAscii, isWellFormed, utf8 } from "../port/text.js";

export const MAX_PATH_BYTES = 1024;
export const MAX_SEGMENT_BYTES = 255;
export const MAX_DEPTH = 64;

// biome-ignore lint/suspicious/noControlCharactersInRegex: control characters are what it finds
const FORBIDDEN = /[\u0000-\u001f\u007f-\u009f\\]/;

/** Returns the path's segments, or throws `invalid_path`. */
export function parsePath(path: unknown): string[] {
  if (typeof path !== "string") refuse(path, "a path is a string");
  if (path === "") refuse(path, "a path is not empty");
  if (FORBIDDEN.test(path)) refuse(path, "no control character, NUL or backslash");
  // An ASCII path is its own NFC form, has no surrogate, and one byte per character.
  const ascii = isAscii(path);
  if (!ascii) {
    if (!isWellFormed(path)) refuse(path, "well-formed Unicode (no lone surrogate)");
    if (path.normalize("NFC") !== path) refuse(path, "a path is in Unicode NFC");
  }
  const bytes = (text: string) => (ascii ? text.length : utf8(text).length);
  if (bytes(path) > MAX_PATH_BYTES) refuse(path, `at most ${MAX_PATH_BYTES} UTF-8 bytes`);
  const segments = path.split("/");
  if (segments.length > MAX_DEPTH) refuse(path, `at most ${MAX_DEPTH} segments`);
  for (const segment of segments) {
    if (segment === "")
      refuse(path, "relative, with no empty segment (no leading, trailing or double /)");
    if (segment === "." || segment === "..") refuse(path, 'no "." or ".." segment');
    if (bytes(segment) > MAX_SEGMENT_BYTES) {
      refuse(path, `at most ${MAX_SEGMENT_BYTES} UTF-8 bytes in one segment`);
    }
  }
  return segments;
}

/** A directory argument: like a path, but "" (or omitted) means the workspace's top. */
export function parseDirectory(directory: unknown): string[] {
  return directory === undefined || directory === "" ? [] : parsePath(directory);
}

function refuse(path: unknown, rule: string): never {
  throw new RunledgerError(
    "invalid_path",
    `invalid workspace path ${JSON.stringify(path)}: ${rule}; nothing was written`,
    { details: { path, rule } },
  );
}
