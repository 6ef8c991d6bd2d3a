/**
 * What every child script shares: the driver source each request carries,
 * loading the driver from it, the JSON-line messages written to the suite on
 * stdout, the one-word commands read from stdin, and the run-and-exit wrapper
 * that reports a failure and never outlives a forgotten test run.
 */
import { isAbsolute } from "node:path";
import { createInterface } from "node:readline";
import { pathToFileURL } from "node:url";
import type { Driver } from "@runledger/core/port";

/** Where a child finds the driver: every request starts with these two fields. */
export interface DriverSource {
  /** Module specifier (or absolute path / file: URL) that exports the driver factory. */
  readonly module: string;
  readonly exportName: string;
}

/** The last message of a child whose work threw. */
export interface FailedMessage {
  readonly state: "failed";
  readonly code?: string;
  readonly message: string;
}

/** The request the suite passed as the child's one command-line argument. */
export function readRequest<R extends DriverSource>(): R {
  return JSON.parse(process.argv[2] ?? "") as R;
}

/** Imports `source.module` and calls its `exportName` export to build the driver. */
export async function loadDriver(source: DriverSource): Promise<Driver> {
  const specifier = isAbsolute(source.module) ? pathToFileURL(source.module).href : source.module;
  const exports = (await import(specifier)) as Record<string, unknown>;
  const factory = exports[source.exportName];
  if (typeof factory !== "function") {
    throw new Error(`${source.module} has no function export named ${source.exportName}`);
  }
  return (factory as () => Driver)();
}

/** Writes one message as a JSON line on stdout; resolves once it has been written. */
export async function send<M extends { readonly state: string }>(
  message: M,
  replacer?: (key: string, value: unknown) => unknown,
): Promise<void> {
  const line = JSON.stringify(message, replacer);
  return new Promise((resolve) => process.stdout.write(`${line}\n`, () => resolve()));
}

/** Reads stdin until a line holds one of `words`; undefined when stdin closes first. */
export async function nextCommand<W extends string>(words: readonly W[]): Promise<W | undefined> {
  for await (const line of createInterface({ input: process.stdin })) {
    const word = line.trim();
    if ((words as readonly string[]).includes(word)) return word as W;
  }
  return undefined;
}

/** An error as a failure report tells it: its stack, else its message. */
export function stackOf(error: unknown): string {
  return error instanceof Error ? (error.stack ?? error.message) : String(error);
}

/** An error's message alone. */
export function messageOf(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}

export interface RunOptions {
  /** Exit (with code 3) after this long even if `main` has not finished. */
  readonly lifetimeMs: number;
  /** The failure report's message for what `main` threw. Default: `stackOf`. */
  readonly describe?: (error: unknown) => string;
}

/**
 * Runs a child's `main` and exits: 0 when it resolves; 1 after a "failed"
 * message (with the error's string `code`, if any) when it throws; 3 when it
 * is still running after `lifetimeMs`.
 */
export function runChild(main: () => Promise<void>, options: RunOptions): void {
  const describe = options.describe ?? stackOf;
  setTimeout(() => process.exit(3), options.lifetimeMs).unref();
  main().then(
    () => process.exit(0),
    async (error: unknown) => {
      const code = (error as { code?: unknown } | null)?.code;
      await send<FailedMessage>({
        state: "failed",
        ...(typeof code === "string" ? { code } : {}),
        message: describe(error),
      });
      process.exit(1);
    },
  );
}
