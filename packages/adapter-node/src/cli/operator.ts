/**
 * Errors reworded for the person at the terminal. The library's messages
 * speak to a program's author ("pass { create: … }", "use read or stat");
 * someone running `runledger` needs to hear which file or path is wrong and
 * which command to run next. The code stays the library's (it is the stable
 * part, docs/errors.md); only the message changes, and the library's error
 * is kept whole as the cause.
 */
import { stat } from "node:fs/promises";
import { isRunledgerError, RunledgerError } from "@runledger/core";

/** What was asked on the command line: the words an operator knows. */
export interface Invocation {
  /** The run file the command works on (fork: its source). */
  readonly file: string;
  /** A workspace path named on the line (ls, cat). */
  readonly path?: string;
  /** The --root given, when one was. */
  readonly root?: string;
  /** The file a command writes when it is not `file` (fork's NEWFILE). */
  readonly writes?: string;
}

type Reword = (error: RunledgerError, asked: Invocation) => Promise<string> | string;

const quote = (text: string) => JSON.stringify(text);
const atRoot = (asked: Invocation) =>
  asked.root === undefined ? "the current root" : `root ${asked.root}`;
const rootFlag = (asked: Invocation) => (asked.root === undefined ? "" : ` --root ${asked.root}`);
const detail = (error: RunledgerError, key: string): string | undefined => {
  const value = error.details?.[key];
  return typeof value === "string" ? value : undefined;
};
/** The directory holding `path` ("" for the top), for a hint to list it. */
const parentOf = (path: string) => path.split("/").slice(0, -1).join("/");

/** Why an existing-run open found no run, from the file itself. */
async function whyNoRun(file: string): Promise<string> {
  const found = await stat(file).catch(() => undefined);
  if (found === undefined) return "the file does not exist";
  if (found.size === 0) return "the file is empty";
  return "it is a SQLite database with no tables";
}

const REWORD: Readonly<Record<string, Reword>> = {
  not_found: async (_error, asked) =>
    `no run in ${asked.file}: ${await whyNoRun(asked.file)}. Check the path ` +
    "(`runledger demo` writes a sample run to look at)",
  not_a_directory: (_error, asked) => {
    const path = asked.path ?? "";
    return `${quote(path)} is a file, not a directory: print it with \`runledger cat ${asked.file} ${path}${rootFlag(asked)}\``;
  },
  not_a_file: (_error, asked) => {
    const path = asked.path ?? "";
    return `${quote(path)} is a directory, not a file: list it with \`runledger ls ${asked.file} ${path}${rootFlag(asked)}\``;
  },
  path_not_found: (error, asked) => {
    const path = detail(error, "path") ?? asked.path ?? "";
    const parent = parentOf(path);
    return (
      `nothing at ${quote(path)} in ${atRoot(asked)} of ${asked.file}: see what is there with ` +
      `\`runledger ls ${asked.file}${parent === "" ? "" : ` ${parent}`}${rootFlag(asked)}\``
    );
  },
  root_not_found: (_error, asked) =>
    `${asked.file} holds no root ${asked.root ?? ""} (never recorded, or removed by \`runledger gc\`): ` +
    `\`runledger log ${asked.file} --json\` lists the root of every event`,
  invalid_path: (error, asked) => {
    const rule = detail(error, "rule");
    const path = asked.path ?? "";
    return `${quote(path)} is not a workspace path${rule === undefined ? "" : `: ${rule}`}; for example analysis/doc-01.json`;
  },
  needs_recovery: (_error, asked) =>
    `cannot read ${asked.file} without changing it: ${asked.file}-wal holds commits and ` +
    `${asked.file}-shm is missing, so only a writer can fold them in. Let the program that ` +
    `writes this run open it once (or run \`sqlite3 ${asked.file} "PRAGMA wal_checkpoint"\`), ` +
    "then run this command again; nothing was changed",
  busy: (_error, asked) =>
    `${asked.writes ?? asked.file} is locked by another process that is writing to it; ` +
    "run this command again once that process is done",
  run_in_use: (_error, asked) =>
    `${asked.file} is open in another program (or another lease): close it there, then run ` +
    "this command again; nothing was deleted",
  read_only: (_error, asked) =>
    `cannot write to ${asked.writes ?? asked.file}: check that you may write the file and ` +
    "its directory, and that the file system is not mounted read-only",
};

/**
 * The error as the CLI shows it: one the library raised, with a message
 * for an operator where the library's own speaks about its API; any other
 * error unchanged.
 */
export async function forOperator(error: unknown, asked: Invocation): Promise<unknown> {
  if (!isRunledgerError(error)) return error;
  const reword = REWORD[error.code];
  if (reword === undefined) return error;
  return new RunledgerError(error.code, await reword(error, asked), {
    cause: error,
    ...(error.details === undefined ? {} : { details: { ...error.details } }),
    ...(error.sqliteCode === undefined ? {} : { sqliteCode: error.sqliteCode }),
  });
}
