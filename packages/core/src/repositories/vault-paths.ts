/**
 * Where a vault's directories are stored: relative to the datastore's root,
 * never absolute. A vault config is a document, and on format 3 a typed
 * change, a commit and a chunk: an absolute path there would name one
 * machine's layout for ever, in every copy of the log and every read model.
 * So each directory setting of a vault (VAULT_DIRECTORY_SETTINGS: a local
 * vault's `baseDir`) is rewritten before anything is stored or staged:
 *
 * - an absolute POSIX path inside the root becomes the path relative to it
 *   (the root itself is `.`);
 * - a relative path is kept, normalized (`.` and `..` folded, `\` read as a
 *   separator so a Windows-style path means the same everywhere);
 * - anything that names a place outside the root is refused with
 *   `vault_path_outside_root`: an absolute path not under the root, a
 *   relative one whose `..` climbs above it, a Windows drive or UNC path, a
 *   `~` home path — and any absolute path when the datastore has no root
 *   (a datastore on a server).
 *
 * The comparison is lexical (core touches no file system): the root is the
 * canonical directory of the datastore's file, so an absolute path given
 * through a symlinked spelling of that directory is refused; give it relative.
 */
import { RunledgerError } from "../port/errors.js";
import { resolvePosix } from "../port/files.js";
import type { JsonObject, JsonValue } from "../port/json.js";

/** The settings of each vault type that name a directory, stored relative to the root. */
export const VAULT_DIRECTORY_SETTINGS: Readonly<Record<string, readonly string[]>> = {
  local_encryption: ["baseDir"],
};

/** The settings with every directory setting of the vault's type stored relative to `root`. */
export function storedVaultSettings(
  vault: string,
  type: string,
  settings: JsonObject,
  root: string | undefined,
): JsonObject {
  const fields = VAULT_DIRECTORY_SETTINGS[type] ?? [];
  if (!fields.some((field) => field in settings)) return settings;
  const stored: Record<string, JsonValue> = { ...settings };
  for (const field of fields) {
    const value = settings[field];
    if (value === undefined) continue;
    if (typeof value !== "string" || value.length === 0 || value.includes("\u0000")) {
      throw new RunledgerError(
        "invalid_argument",
        `the ${field} of vault ${vault} (${type}) is a directory: give a non-empty path ` +
          "(relative to the datastore's root, or `.` for the root itself)",
        { details: { vault, field } },
      );
    }
    stored[field] = relativeDirectory(vault, field, value, root);
  }
  return stored;
}

/** `directory` as stored: relative to `root`, normalized; refused when it leaves the root. */
export function relativeDirectory(
  vault: string,
  field: string,
  directory: string,
  root: string | undefined,
): string {
  const path = directory.replaceAll("\\", "/");
  const outside = (why: string, hint: string) =>
    new RunledgerError(
      "vault_path_outside_root",
      `the ${field} of vault ${vault} is ${JSON.stringify(directory)}, ${why}; a vault's ` +
        `directories are stored relative to the datastore's root, so ${hint}. Nothing was stored`,
      { details: { vault, field, directory, root: root ?? null } },
    );
  if (/^[A-Za-z]:/.test(path) || path.startsWith("//")) {
    throw outside(
      "a Windows drive or network path",
      "give it relative to the datastore's root instead",
    );
  }
  if (path.startsWith("~")) {
    throw outside(
      "under a home directory",
      "move the vault's directory under the datastore's root and give it relative",
    );
  }
  if (path.startsWith("/")) {
    if (root === undefined) {
      throw outside(
        "absolute, and this datastore is on a server, with no local root",
        "give it relative to where the vault runs",
      );
    }
    const relative = underRoot(root, path);
    if (relative === undefined) {
      throw outside(
        `outside the datastore's root ${root}`,
        "move the vault's directory under the root, or keep the datastore beside it",
      );
    }
    return relative;
  }
  const segments: string[] = [];
  for (const segment of path.split("/")) {
    if (segment === "" || segment === ".") continue;
    if (segment !== "..") segments.push(segment);
    else if (segments.pop() === undefined) {
      throw outside(
        "which climbs above the datastore's root",
        "give a path that stays under the root",
      );
    }
  }
  return segments.length === 0 ? "." : segments.join("/");
}

/** `path` (absolute) relative to `root` (absolute, canonical), or undefined when it is not under it. */
function underRoot(root: string, path: string): string | undefined {
  const normalized = resolvePosix("/", path);
  if (normalized === root) return ".";
  const prefix = root === "/" ? "/" : `${root}/`;
  return normalized.startsWith(prefix) ? normalized.slice(prefix.length) : undefined;
}
