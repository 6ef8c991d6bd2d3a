/**
 * Canonical identity for database files, shared by every file-backed adapter.
 * Core may not touch the file system itself, so the adapter hands in the few
 * operations this needs; the path logic (POSIX) lives here, once.
 */
export interface FileSystemProbe {
  /** The process's working directory, an absolute POSIX path. */
  cwd(): string;
  /** The real path of an existing entry, or undefined when it does not exist. */
  realpath(path: string): Promise<string | undefined>;
  /** What is at a path: a file, a directory, or nothing. */
  kind(path: string): Promise<"file" | "directory" | undefined>;
  /**
   * Whether this process may write the entry at a path (a file's bytes, a
   * directory's entries), as the operating system decides for its user:
   * false when it may not, or when nothing is there.
   */
  writable(path: string): Promise<boolean>;
}

import type { OpenOptions } from "./driver.js";
import { fromSqliteFailure, RunledgerError } from "./errors.js";

/** The synchronous calls a runtime offers, from which `syncProbe` builds a probe. */
export interface SyncFileSystem {
  cwd(): string;
  /** The real path; throws when nothing is there. */
  realpath(path: string): string;
  /** Throws when nothing is there. */
  isDirectory(path: string): boolean;
  /** Throws when this process may not write the entry (node:fs: `accessSync(path, constants.W_OK)`). */
  checkWritable(path: string): void;
}

/**
 * A probe over synchronous calls, any failure read as "nothing there". A
 * local stat or realpath takes microseconds; its promise form would wait for
 * a thread-pool round trip on every open.
 */
export function syncProbe(fs: SyncFileSystem): FileSystemProbe {
  return {
    cwd: () => fs.cwd(),
    realpath: async (path) => {
      try {
        return fs.realpath(path);
      } catch {
        return undefined;
      }
    },
    kind: async (path) => {
      try {
        return fs.isDirectory(path) ? "directory" : "file";
      } catch {
        return undefined;
      }
    },
    writable: async (path) => {
      try {
        fs.checkWritable(path);
        return true;
      } catch {
        return false;
      }
    },
  };
}

/** Joins and normalizes POSIX paths lexically: no `.` or `..` segments, no doubled slashes. */
export function resolvePosix(base: string, path: string): string {
  const joined = path.startsWith("/") ? path : `${base}/${path}`;
  const out: string[] = [];
  for (const segment of joined.split("/")) {
    if (segment === "" || segment === ".") continue;
    if (segment === "..") out.pop();
    else out.push(segment);
  }
  return `/${out.join("/")}`;
}

export function splitPosix(path: string): { directory: string; base: string } {
  const slash = path.lastIndexOf("/");
  return { directory: slash <= 0 ? "/" : path.slice(0, slash), base: path.slice(slash + 1) };
}

/**
 * The canonical path of a database file: absolute, with every symlink
 * resolved where the file exists, and with the directory's symlinks resolved
 * where it does not exist yet. A missing directory leaves the lexical path,
 * which the open then refuses as `cannot_open`.
 */
export async function canonicalFilePath(location: string, fs: FileSystemProbe): Promise<string> {
  const absolute = resolvePosix(fs.cwd(), location);
  const whole = await fs.realpath(absolute);
  if (whole !== undefined) return whole;
  const { directory, base } = splitPosix(absolute);
  const realDirectory = await fs.realpath(directory);
  if (realDirectory === undefined) return absolute;
  return realDirectory === "/" ? `/${base}` : `${realDirectory}/${base}`;
}

/**
 * Refuses, before the driver is called, what SQLite would refuse less clearly:
 * a missing directory, a missing file when the caller did not ask to create
 * one (some drivers create it regardless), and a writable open of a file
 * this process may not write, or whose directory it may not write — SQLite
 * would open such a file read-only without a word, or fail later with a
 * message that says nothing of `readOnly`, or (adapter-wasm) not open it at all.
 */
export async function checkFileOpenable(
  location: string,
  request: Pick<OpenOptions, "create" | "readOnly">,
  fs: FileSystemProbe,
): Promise<void> {
  const path = resolvePosix(fs.cwd(), location);
  const found = await fs.kind(path);
  if (found === "file") {
    if (!request.readOnly) await checkWritable(location, path, fs);
    return;
  }
  if (found === "directory") {
    throw fromSqliteFailure(
      "SQLITE_CANTOPEN",
      `cannot open ${location}: it is a directory`,
      undefined,
    );
  }
  const { directory } = splitPosix(path);
  if ((await fs.kind(directory)) !== "directory") {
    throw fromSqliteFailure(
      "SQLITE_CANTOPEN",
      `cannot open ${location}: the directory ${directory} does not exist`,
      undefined,
      { missing: "directory" },
    );
  }
  if (!request.create || request.readOnly) {
    throw fromSqliteFailure(
      "SQLITE_CANTOPEN",
      `cannot open ${location}: the file does not exist`,
      undefined,
      { missing: "file" },
    );
  }
}

/**
 * A writable open writes the file and creates files beside it: the `-wal`
 * and `-shm` of WAL, the rollback journal until the switch to WAL. Both the
 * file and its directory must be writable for this process, else the open is
 * `read_only` before anything is touched, pointing to `{ readOnly: true }`.
 */
async function checkWritable(location: string, path: string, fs: FileSystemProbe): Promise<void> {
  const hint = "open it with { readOnly: true } to read it, or make it writable to write it";
  if (!(await fs.writable(path))) {
    throw new RunledgerError(
      "read_only",
      `cannot open ${location} for writing: this process may not write the file; ${hint}`,
      { sqliteCode: "SQLITE_READONLY", details: { notWritable: "file" } },
    );
  }
  const { directory } = splitPosix(path);
  if (!(await fs.writable(directory))) {
    throw new RunledgerError(
      "read_only",
      `cannot open ${location} for writing: this process may not write its directory ` +
        `${directory}, where SQLite keeps the file's journal (-wal, -shm); ${hint}`,
      { sqliteCode: "SQLITE_READONLY_DIRECTORY", details: { notWritable: "directory" } },
    );
  }
}
