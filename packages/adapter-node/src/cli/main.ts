import { createRequire } from "node:module";
import { Command, CommanderError, InvalidArgumentError } from "commander";
import { cat } from "./cat.js";
import { demo } from "./demo.js";
import { fork } from "./fork.js";
import { gc } from "./gc.js";
import { inspect } from "./inspect.js";
import { log } from "./log.js";
import { ls } from "./ls.js";
import { EXIT_OK, EXIT_USAGE, fail, type Output, usage } from "./output.js";
import { verify } from "./verify.js";

interface Flags {
  readonly json?: boolean;
}

const { version } = createRequire(import.meta.url)("../package.json") as { version: string };

/** A parser for whole-number arguments: commander reports what it throws as a usage error. */
function whole(min: number) {
  return (text: string): number => {
    const value = /^\d+$/.test(text) ? Number(text) : Number.NaN;
    if (!Number.isSafeInteger(value) || value < min) {
      throw new InvalidArgumentError(`expected a whole number >= ${min}`);
    }
    return value;
  };
}

function program(done: (exit: number) => void): Command {
  const root = new Command("runledger")
    .description("Look inside runledger run files, or run the demo workflow.")
    .version(version)
    .exitOverride()
    .configureOutput({ outputError: () => {} })
    .showSuggestionAfterError()
    .addHelpText(
      "after",
      "\nExit codes: 0 done, 1 failed (the error code is printed), 2 wrong command line.\nEvery command takes --json. Docs: docs/cli.md",
    );
  const command = (name: string, description: string) =>
    root
      .command(name)
      .description(description)
      .option("--json", "print one JSON document on stdout")
      .exitOverride()
      .configureOutput({ outputError: () => {} });
  const output = (flags: Flags): Output => ({ json: flags.json === true });

  command("demo", "run a sample workflow on better-sqlite3 and print a summary")
    .argument("[dir]", "directory for the run file (default: a new temporary directory)")
    .action(async (dir: string | undefined, flags: Flags) => done(await demo(dir, output(flags))));
  command("inspect", "recognition outcome, schema digest, run row, counts, current root")
    .argument("<file>", "run file")
    .action(async (file: string, flags: Flags) => done(await inspect(file, output(flags))));
  command(
    "verify",
    "deep check: integrity, foreign keys, journal, every digest (exit 1 on problems)",
  )
    .argument("<file>", "run file")
    .action(async (file: string, flags: Flags) => done(await verify(file, output(flags))));
  command("log", "journal events in sequence order")
    .argument("<file>", "run file")
    .option("--after <n>", "only events after sequence n", whole(0))
    .option("--limit <n>", "at most n events", whole(0))
    .action(async (file: string, flags: Flags & { after?: number; limit?: number }) =>
      done(await log(file, flags, output(flags))),
    );
  command("ls", "the entries of a workspace directory")
    .argument("<file>", "run file")
    .argument("[dir]", "workspace directory (default: the top)")
    .option("--root <id>", "list at this root (default: the current root)")
    .action(async (file: string, dir: string | undefined, flags: Flags & { root?: string }) =>
      done(await ls(file, dir, flags, output(flags))),
    );
  command("cat", "a workspace file's bytes on stdout")
    .argument("<file>", "run file")
    .argument("<path>", "workspace path")
    .option("--root <id>", "read at this root (default: the current root)")
    .action(async (file: string, path: string, flags: Flags & { root?: string }) =>
      done(await cat(file, path, flags, output(flags))),
    );
  command("fork", "a new run file starting at the root a journal event recorded")
    .argument("<file>", "source run file")
    .argument("<seq>", "journal sequence whose root the fork starts from", whole(1))
    .argument("<newfile>", "new run file (must not hold a run with history)")
    .option("--run-id <id>", "run id of the new run (default: a random UUID)")
    .action(async (file: string, seq: number, target: string, flags: Flags & { runId?: string }) =>
      done(await fork(file, seq, target, flags, output(flags))),
    );
  command("gc", "collect workspace objects nothing retains")
    .argument("<file>", "run file")
    .option("--prune-before <seq>", "first drop journal events before this sequence", whole(1))
    .action(async (file: string, flags: Flags & { pruneBefore?: number }) =>
      done(await gc(file, flags, output(flags))),
    );
  return root;
}

/** Runs the CLI on `argv` (the arguments after the program name); resolves to the exit code. */
export async function main(argv: readonly string[]): Promise<number> {
  const json = argv.includes("--json");
  let exit = EXIT_OK;
  // A reader that stops early (`runledger log FILE | head`) is not a failure.
  process.stdout.on("error", (error: NodeJS.ErrnoException) => {
    if (error.code === "EPIPE") process.exit(EXIT_OK);
    throw error;
  });
  try {
    await program((code) => (exit = code)).parseAsync(argv as string[], { from: "user" });
    return exit;
  } catch (error) {
    if (error instanceof CommanderError) {
      // --help and --version end here with exit code 0; help shown for a bare `runledger` with 1.
      if (error.code === "commander.helpDisplayed" || error.code === "commander.version") {
        return error.exitCode;
      }
      if (error.code === "commander.help") return EXIT_USAGE;
      return fail({ json }, usage(error.message.replace(/^error: /, "")));
    }
    return fail({ json }, error);
  }
}
