/**
 * Creating a database file whole, for an adapter that can build a database in
 * memory and hand its bytes over (better-sqlite3's `serialize`): the optional
 * `Driver.stage` of the port.
 *
 * Why: created in place, a new run costs SQLite's syncs — the switch of the
 * new file to WAL, the first commit's log header, the checkpoint when the last
 * connection closes — about 3 ms of a 4 ms creation on a disk that syncs in
 * half a millisecond, for a file of a dozen pages. Built in memory, the same
 * pages are written in one call and synced once.
 *
 * Two promises hold it, each checked by the conformance suite:
 * - **The same bytes.** The image holds the pages creation in place writes
 *   (the same statements, in the same order, on the same page size); only
 *   its header differs, and `finishStagedImage` writes what SQLite's would
 *   hold after the switch to WAL and the one creating commit.
 * - **Whole or not at all.** The image is written beside the location under
 *   a staging name, synced, then hard-linked to the location — a link that
 *   fails when anything is there already (another creator won; its file is
 *   opened and checked like any existing one). A reader never meets a half-
 *   written database at the location. A kill between the write and the link
 *   can leave the staging file behind — never a database: listing skips its
 *   name, the next creation of that location removes it once it is older
 *   than a live creator could hold it (a minute), and it may be deleted at
 *   any time.
 */

import type { RunledgerErrorCode } from "./codes.js";
import { RunledgerError } from "./errors.js";
import { splitPosix } from "./files.js";

/** The 16 bytes every SQLite database file starts with. */
const MAGIC = "SQLite format 3\u0000";

/**
 * The page-1 header fields creation in place leaves different from an
 * in-memory database's (https://sqlite.org/fileformat2.html, "The Database
 * Header"), each as SQLite leaves it after switching an empty file to WAL
 * (the change counter becomes 1) and committing the schema (page 1 is written
 * again: 2).
 */
const WAL_FORMAT = { offsets: [18, 19], value: 2 } as const;
const CHANGE_COUNTER = 24;
const VERSION_VALID_FOR = 92;
const VERSION_NUMBER = 96;
const COUNTER_AFTER_CREATION = 2;

/**
 * Finishes an in-memory database's image (`serialize`d) as the file creation
 * in place would leave: WAL format, the change counter and version-valid-for
 * of one creating commit, and the writing library's version number (the
 * `SQLITE_VERSION_NUMBER` of its `sqlite_version()`, e.g. 3050004).
 * Refuses an image that is not a fresh in-memory database's (which would be
 * a bug of the adapter), so nothing else is ever published.
 */
export function finishStagedImage(image: Uint8Array, sqliteVersionNumber: number): Uint8Array {
  const header = new DataView(image.buffer, image.byteOffset, image.byteLength);
  const magic = String.fromCharCode(...image.subarray(0, MAGIC.length));
  if (image.byteLength < 100 || magic !== MAGIC || header.getUint32(CHANGE_COUNTER) !== 0) {
    throw new RunledgerError(
      "internal_error",
      "a staged database's image is not a new in-memory database; report this as a bug of the adapter",
      { details: { bytes: image.byteLength } },
    );
  }
  for (const offset of WAL_FORMAT.offsets) image[offset] = WAL_FORMAT.value;
  header.setUint32(CHANGE_COUNTER, COUNTER_AFTER_CREATION);
  header.setUint32(VERSION_VALID_FOR, COUNTER_AFTER_CREATION);
  header.setUint32(VERSION_NUMBER, sqliteVersionNumber);
  return image;
}

/** `sqlite_version()`'s text ("3.50.4") as SQLITE_VERSION_NUMBER (3050004). */
export function sqliteVersionNumber(version: string): number {
  const [major = 0, minor = 0, patch = 0] = version.split(".").map(Number);
  return major * 1_000_000 + minor * 1_000 + patch;
}

/** The suffix every staging file's name ends with; listing skips such names. */
const STAGING_SUFFIX = ".creating";

/**
 * A staging file older than this is a killed creator's: a live one holds its
 * file for the time of one write and one sync (about a millisecond).
 */
export const ABANDONED_STAGING_MS = 60_000;

/**
 * Where a database for `path` is staged: beside it (a hard link needs the
 * same file system), hidden, named after it. One name a location: two
 * creators of one location never both stage it, and what a killed creator
 * left is found again by the next creation of that location.
 */
export function stagingPath(path: string): string {
  const slash = path.lastIndexOf("/");
  return `${path.slice(0, slash + 1)}.${path.slice(slash + 1)}${STAGING_SUFFIX}`;
}

/** Whether a file name is a staging file's (`stagingPath`): never a database. */
export function isStagingFile(name: string): boolean {
  return name.startsWith(".") && name.endsWith(STAGING_SUFFIX);
}

/** The calls of `node:fs` publishing makes, named and shaped as `node:fs` has them. */
export interface PublishFileSystem {
  openSync(path: string, flags: "wx" | "r", mode?: number): number;
  writeSync(fd: number, buffer: Uint8Array): number;
  fsyncSync(fd: number): void;
  closeSync(fd: number): void;
  linkSync(existing: string, path: string): void;
  rmSync(path: string, options: { force: true }): void;
  statSync(path: string): { readonly mtimeMs: number };
}

export interface PublishOptions {
  /**
   * Sync the directory too once the file is linked, so the new name survives
   * a power loss as the bytes do: for `durability: "full"`, where a commit
   * is durable once it returns. Without it (`"normal"`), a power loss right
   * after may lose the new file whole — never leave half of one — until the
   * run's first commit syncs its log, and the directory with it.
   */
  readonly syncDirectory?: boolean;
  /** The time staging files' ages are taken from; default `Date.now()`. */
  readonly now?: number;
}

/**
 * Writes `image` at `path` whole, or leaves `path` as it was: the bytes go to
 * the staging file beside it, are synced, and the staging file is linked to
 * `path`, then removed. False, with nothing changed at `path`, when
 * something was there already, or when another creator is staging it right
 * now (its staging file is younger than `ABANDONED_STAGING_MS`; an older one
 * is a killed creator's, removed, and the staging goes on). A failure of the
 * file system is `disk_full`, `read_only`, `permission_denied` or
 * `io_error`, with node's error as its cause.
 */
export function publishFile(
  path: string,
  image: Uint8Array,
  fs: PublishFileSystem,
  options: PublishOptions = {},
): boolean {
  const staging = stagingPath(path);
  try {
    const fd = openStaging(staging, fs, options.now ?? Date.now());
    if (fd === undefined) return false;
    let linked: boolean;
    try {
      writeAndSync(fd, image, fs);
      linked = linkOnce(staging, path, fs);
    } finally {
      fs.rmSync(staging, { force: true });
    }
    if (linked && options.syncDirectory === true) syncDirectoryOf(path, fs);
    return linked;
  } catch (error) {
    const errno = String((error as { code?: unknown }).code);
    throw new RunledgerError(
      FILE_FAILURES[errno] ?? "io_error",
      `cannot create ${path}: ${error instanceof Error ? error.message : String(error)}; ` +
        "nothing was written at that location",
      { cause: error },
    );
  }
}

/**
 * Removes the staging file of `path` if a killed creator left it (older than
 * `ABANDONED_STAGING_MS`); a live creator's is left alone. For a location
 * that exists, where no staging can follow.
 */
export function removeAbandonedStaging(
  path: string,
  fs: Pick<PublishFileSystem, "rmSync" | "statSync">,
  now: number = Date.now(),
): void {
  abandoned(stagingPath(path), fs, now);
}

/**
 * The mode a new file is created with, as SQLite creates a database
 * (SQLITE_DEFAULT_FILE_PERMISSIONS, 0644), the process's umask applied: a
 * run created whole has the permissions of one created in place.
 */
const FILE_MODE = 0o644;

/** Node's error codes a creation can meet, as the port's codes. */
const FILE_FAILURES: Readonly<Record<string, RunledgerErrorCode>> = {
  ENOSPC: "disk_full",
  EDQUOT: "disk_full",
  EROFS: "read_only",
  EACCES: "permission_denied",
  EPERM: "permission_denied",
};

const codeOf = (error: unknown) => (error as { code?: unknown } | null)?.code;

/** The new staging file, or undefined while another creator holds the name. */
function openStaging(staging: string, fs: PublishFileSystem, now: number): number | undefined {
  for (let attempt = 0; ; attempt++) {
    try {
      return fs.openSync(staging, "wx", FILE_MODE);
    } catch (error) {
      if (codeOf(error) !== "EEXIST") throw error;
      if (attempt > 0 || !abandoned(staging, fs, now)) return undefined;
    }
  }
}

/** Whether the staging file was a killed creator's, and is now removed (or gone already). */
function abandoned(
  staging: string,
  fs: Pick<PublishFileSystem, "rmSync" | "statSync">,
  now: number,
): boolean {
  let modified: number;
  try {
    modified = fs.statSync(staging).mtimeMs;
  } catch (error) {
    if (codeOf(error) === "ENOENT") return true;
    throw error;
  }
  if (now - modified < ABANDONED_STAGING_MS) return false;
  fs.rmSync(staging, { force: true });
  return true;
}

function writeAndSync(fd: number, image: Uint8Array, fs: PublishFileSystem): void {
  try {
    for (let written = 0; written < image.byteLength; ) {
      written += fs.writeSync(fd, image.subarray(written));
    }
    fs.fsyncSync(fd);
  } finally {
    fs.closeSync(fd);
  }
}

/**
 * Why a link can fail and the creation still go on, in place: something is
 * at the location (another creator won), the staging file is gone (removed
 * as abandoned by a creator that saw it older than the limit), or the file
 * system makes no hard links (FAT, some network file systems).
 */
const NOT_LINKED: ReadonlySet<unknown> = new Set([
  "EEXIST",
  "ENOENT",
  "EPERM",
  "ENOTSUP",
  "EOPNOTSUPP",
  "EMLINK",
  "EXDEV",
]);

/**
 * Links the staging file to `path`: false when it could not be linked for
 * a reason the open that follows deals with (`NOT_LINKED`: it opens what is
 * there, or creates in place).
 */
function linkOnce(staging: string, path: string, fs: PublishFileSystem): boolean {
  try {
    fs.linkSync(staging, path);
    return true;
  } catch (error) {
    if (NOT_LINKED.has(codeOf(error))) return false;
    throw error;
  }
}

/** Syncs the directory `path` is in: its new name then survives a power loss. */
function syncDirectoryOf(path: string, fs: PublishFileSystem): void {
  const fd = fs.openSync(splitPosix(path).directory, "r");
  try {
    fs.fsyncSync(fd);
  } finally {
    fs.closeSync(fd);
  }
}
