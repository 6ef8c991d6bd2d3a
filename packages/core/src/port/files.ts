/**
 * Canonical identity for database files, shared by every file-backed adapter.
 * Core may not touch the file system itself, so the adapter hands in the two
 * operations this needs; the path logic (POSIX) lives here, once.
 */
export interface FileSystemProbe {
  /** The process's working directory, an absolute POSIX path. */
  cwd(): string;
  /** The real path of an existing entry, or undefined when it does not exist. */
  realpath(path: string): Promise<string | undefined>;
  /** What is at a path: a file, a directory, or nothing. */
  kind(path: string): Promise<"file" | "directory" | undefined>;
}

import { fromSqliteFailure } from "./errors.js";

/** The synchronous calls a runtime offers, from which `syncProbe` builds a probe. */
export interface SyncFileSystem {
  cwd(): string;
  /** The real path; throws when nothing is there. */
  realpath(path: string): string;
  /** Throws when nothing is there. */
  isDirectory(path: string): boolean;
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
 * a missing directory, or a missing file when the caller did not ask to create
 * one (some drivers create it regardless).
 */
export async function checkFileOpenable(
  location: string,
  create: boolean,
  fs: FileSystemProbe,
): Promise<void> {
  const path = resolvePosix(fs.cwd(), location);
  // The common case costs one probe: a file that is there needs nothing more.
  const found = await fs.kind(path);
  if (found === "file") return;
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
  if (!create) {
    throw fromSqliteFailure(
      "SQLITE_CANTOPEN",
      `cannot open ${location}: the file does not exist`,
      undefined,
      { missing: "file" },
    );
  }
}
