/**
 * The commands of the `runledger` program, as commander definitions: the
 * name, arguments and options of each, and which file's function does its
 * work. Grouped as docs/cli.md groups them; main.ts makes the program and
 * maps outcomes to exit codes.
 */
import { type Command, InvalidArgumentError } from "commander";
import { cat } from "./cat.js";
import { demo } from "./demo.js";
import { diff } from "./diff.js";
import { fork } from "./fork.js";
import { gc } from "./gc.js";
import { inspect } from "./inspect.js";
import { type LogOptions, log } from "./log.js";
import { ls } from "./ls.js";
import type { Invocation } from "./operator.js";
import type { Output } from "./output.js";
import { rm } from "./rm.js";
import { type RunsOptions, runs } from "./runs.js";
import { DEFAULT_HOST, DEFAULT_PORT, type ServeOptions, serve } from "./serve/serve.js";
import { verify } from "./verify.js";

/**
 * Runs a command's work with the program's output mode; a failure is
 * reworded for the operator about what was `asked` (none: left as thrown).
 */
export type Act = (
  asked: Invocation | undefined,
  work: (output: Output) => Promise<number>,
) => Promise<void>;

/** Adds every command to the program. */
export function addCommands(root: Command, act: Act): void {
  tryIt(root, act);
  lookInside(root, act);
  change(root, act);
  others(root, act);
}

/** The commands that read a run file: what it is, its journal, its workspace. */
function lookInside(root: Command, act: Act): void {
  root
    .command("inspect")
    .description("what a run file is and holds: format, schema digest, status, counts")
    .argument("<file>", "run file")
    .action((file: string) => act({ file }, (output) => inspect(file, output)));
  root
    .command("verify")
    .description(
      "deep check of a run file: SQLite integrity, journal, every digest (exit 1 on problems)",
    )
    .argument("<file>", "run file")
    .action((file: string) => act({ file }, (output) => verify(file, output)));
  root
    .command("log")
    .description("print the journal's events in order")
    .argument("<file>", "run file")
    .option("--after <n>", "only events after sequence n", whole(0))
    .option("--limit <n>", "at most n events", whole(0))
    .option("--full", "print long records whole (plain output cuts them at 200 characters)")
    .action((file: string, flags: LogOptions) =>
      act({ file }, (output) => log(file, flags, output)),
    );
  root
    .command("ls")
    .description("list a workspace directory")
    .argument("<file>", "run file")
    .argument("[dir]", "workspace directory (default: the top)")
    .option("--root <id>", "list at this root (default: the current root)")
    .action((file: string, dir: string | undefined, flags: { root?: string }) =>
      act({ file, ...flags, ...(dir === undefined ? {} : { path: dir }) }, (output) =>
        ls(file, dir, flags, output),
      ),
    );
  root
    .command("diff")
    .description("the files added (A), removed (D) and modified (M) between two points of a run")
    .argument("<file>", "run file")
    .argument("<from>", "a journal sequence, a root id, or a unique prefix of 8+ hex digits")
    .argument("<to>", "the same, for the other side")
    .action((file: string, from: string, to: string) =>
      act({ file }, (output) => diff(file, from, to, output)),
    );
  root
    .command("cat")
    .description("print a workspace file's bytes")
    .argument("<file>", "run file")
    .argument("<path>", "workspace path")
    .option("--root <id>", "read at this root (default: the current root)")
    .action((file: string, path: string, flags: { root?: string }) =>
      act({ file, path, ...flags }, (output) => cat(file, path, flags, output)),
    );
}

/** The commands that write: a fork to a new file, garbage collection, removal. */
function change(root: Command, act: Act): void {
  root
    .command("fork")
    .description("start a new run file from the workspace a journal event recorded")
    .argument("<file>", "source run file")
    .argument("<seq>", "journal sequence whose root the fork starts from", whole(1))
    .argument("<newfile>", "new run file (must not hold a run with history)")
    .option("--run-id <id>", "run id of the new run (default: a random UUID)")
    .action((file: string, seq: number, target: string, flags: { runId?: string }) =>
      act({ file, writes: target }, (output) => fork(file, seq, target, flags, output)),
    );
  root
    .command("gc")
    .description("delete workspace data nothing refers to (and, if asked, old journal events)")
    .argument("<file>", "run file")
    .option("--prune-before <seq>", "first drop journal events before this sequence", whole(1))
    .action((file: string, flags: { pruneBefore?: number }) =>
      act({ file }, (output) => gc(file, flags, output)),
    );
  root
    .command("rm")
    .description("delete a run file and its side files (refused while anything has it open)")
    .argument("<file>", "run file")
    .action((file: string) => act({ file }, (output) => rm(file, output)));
}

/** The demo: a sample run written, and its summary. */
function tryIt(root: Command, act: Act): void {
  root
    .command("demo")
    .description("write a sample run (better-sqlite3) and print its summary")
    .argument("[dir]", "directory for the run file (default: a new temporary directory)")
    .action((dir: string | undefined) => act(undefined, (output) => demo(dir, output)));
}

/** The catalog's listing and the local web page. */
function others(root: Command, act: Act): void {
  root
    .command("runs")
    .description("list the runs a run catalog holds, newest first")
    .argument("<catalog>", "run catalog file (new RunStore({ driver, catalog }))")
    .option("--workflow <id>", "only the runs of this workflow")
    .option("--status <status>", "only runs in this status (several: separated by commas)")
    .action((catalog: string, flags: RunsOptions) =>
      act({ file: catalog }, (output) => runs(catalog, flags, output)),
    );
  root
    .command("serve")
    .description("look at a run (or a directory of runs) in the browser; read-only, on 127.0.0.1")
    .argument("<path>", "run file, or a directory of run files")
    .option("--port <n>", `port to listen on (0: any free one)`, whole(0, 65_535), DEFAULT_PORT)
    .option(
      "--host <address>",
      "address to listen on (another than loopback lets other machines in)",
      DEFAULT_HOST,
    )
    .option(
      "--catalog <file>",
      "list a directory's runs through this run catalog, not by opening each file",
    )
    .action((path: string, flags: ServeOptions) =>
      // At the start the file that fails is the catalog when one is given.
      act({ file: flags.catalog ?? path }, (output) => serve(path, flags, output)),
    );
}

/** A parser for whole-number arguments: commander reports what it throws as a usage error. */
function whole(min: number, max = Number.MAX_SAFE_INTEGER) {
  return (text: string): number => {
    const value = /^\d+$/.test(text) ? Number(text) : Number.NaN;
    if (!Number.isSafeInteger(value) || value < min || value > max) {
      throw new InvalidArgumentError(
        max === Number.MAX_SAFE_INTEGER
          ? `expected a whole number >= ${min}`
          : `expected a whole number from ${min} to ${max}`,
      );
    }
    return value;
  };
}
