/**
 * The `runledger` command line: one commander program, its global `--json`,
 * and the mapping of every outcome to an exit code (0 done, 1 failed,
 * 2 wrong command line). The commands are defined in commands.ts; each
 * command's work lives in a file of its own.
 */
import { createRequire } from "node:module";
import { Command, CommanderError } from "commander";
import { type Act, addCommands } from "./commands.js";
import { forOperator } from "./operator.js";
import { EXIT_OK, fail, type Output, usage } from "./output.js";

const { version } = createRequire(import.meta.url)("../package.json") as { version: string };

/** The line a command ends with: its exit code (0, 1 or 2; docs/cli.md). */
type Done = (exit: number) => void;

function program(done: Done): Command {
  // Set on the program before any command is added: every command inherits
  // the exit override, the silenced error output and the help settings.
  const root = new Command("runledger")
    .description("Look inside runledger run files, or run the demo workflow.")
    .version(version)
    .option("--json", "print one JSON document on stdout (anywhere on the line)")
    .exitOverride()
    .configureOutput({ outputError: () => {} })
    .configureHelp({ showGlobalOptions: true })
    .showSuggestionAfterError()
    .addHelpText(
      "after",
      "\nExit codes: 0 done, 1 failed (the error code is printed), 2 wrong command line.\n" +
        "Help on one command: runledger help <command>. Docs: docs/cli.md",
    );
  /** Runs a command with the program's output mode; a failure is reworded for the operator. */
  const act: Act = async (asked, work) => {
    try {
      done(await work(outputOf(root)));
    } catch (error) {
      throw asked === undefined ? error : await forOperator(error, asked);
    }
  };

  addCommands(root, act);
  return root;
}

/** The output mode the program's global options ask for. */
function outputOf(root: Command): Output {
  return { json: root.opts<{ json?: boolean }>().json === true };
}

/** commander's message as one line, with where to look next. */
function lineOf(error: CommanderError): string {
  const said = error.message.replace(/^error: /, "").replaceAll("\n", " ");
  return `${said}; \`runledger help\` lists the commands and their options`;
}

/** Runs the CLI on `argv` (the arguments after the program name); resolves to the exit code. */
export async function main(argv: readonly string[]): Promise<number> {
  let exit = EXIT_OK;
  // A reader that stops early (`runledger log FILE | head`) is not a failure.
  process.stdout.on("error", (error: NodeJS.ErrnoException) => {
    if (error.code === "EPIPE") process.exit(EXIT_OK);
    throw error;
  });
  const root = program((code) => (exit = code));
  try {
    await root.parseAsync(argv as string[], { from: "user" });
    return exit;
  } catch (error) {
    if (!(error instanceof CommanderError)) return fail(outputOf(root), error);
    switch (error.code) {
      // `--help`, `help`, `help <command>` and `--version` asked for it: exit 0.
      case "commander.helpDisplayed":
      case "commander.version":
        return EXIT_OK;
      // A bare `runledger` (or `help` of no such command) shows the help on
      // stderr: no command is a wrong command line, reported as any other.
      case "commander.help":
        if (error.exitCode === 0) return EXIT_OK;
        return fail(outputOf(root), usage("name a command to run (listed above)"));
      default:
        return fail(outputOf(root), usage(lineOf(error)));
    }
  }
}
