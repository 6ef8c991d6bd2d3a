/**
 * What every command shares about output: the exit codes, JSON or lines
 * for people, back-pressured writes, and how a failure is printed.
 */
import { isRunledgerError, RunledgerError } from "@runledger/core";

/** How a command reports: JSON on stdout, or lines for people. */
export interface Output {
  readonly json: boolean;
}

/** Exit codes: 0 done; 1 the operation failed or found problems; 2 the command line was wrong. */
export const EXIT_OK = 0;
export const EXIT_FAILED = 1;
export const EXIT_USAGE = 2;

/** Writes to a stream and waits while it is full, so large output never piles up in memory. */
export function write(stream: NodeJS.WritableStream, text: string | Uint8Array): Promise<void> {
  return new Promise((resolve, reject) => {
    const ok = stream.write(text, (error) => {
      if (error) reject(error);
    });
    if (ok) resolve();
    else stream.once("drain", resolve);
  });
}

export function toJson(value: unknown): string {
  return JSON.stringify(value, (_key, v: unknown) => (typeof v === "bigint" ? v.toString() : v), 2);
}

/** Prints a command's result: the value as JSON, or the plain lines. */
export async function report(output: Output, value: unknown, plain: () => string[]): Promise<void> {
  if (output.json) await write(process.stdout, `${toJson(value)}\n`);
  else
    await write(
      process.stdout,
      plain()
        .map((line) => `${line}\n`)
        .join(""),
    );
}

/** A wrong command line: exit 2. */
export function usage(message: string): RunledgerError {
  return new RunledgerError("usage", message);
}

/** The error's code and message as the CLI prints them. */
export function describeError(error: unknown): { code: string; message: string } {
  if (isRunledgerError(error)) return { code: error.code, message: error.message };
  const message = error instanceof Error ? error.message : String(error);
  return { code: "internal_error", message };
}

/** Prints a failure (stderr line, or a JSON error object on stdout) and returns its exit code. */
export async function fail(output: Output, error: unknown): Promise<number> {
  const { code, message } = describeError(error);
  if (output.json) await write(process.stdout, `${toJson({ error: { code, message } })}\n`);
  else await write(process.stderr, `runledger: ${code}: ${message}\n`);
  return code === "usage" ? EXIT_USAGE : EXIT_FAILED;
}

/** "2026-01-01T00:00:00.000Z" from milliseconds since the epoch. */
export function iso(ms: number): string {
  return new Date(ms).toISOString();
}

/** The first 12 hex digits of an id, for columns. */
export function short(id: string): string {
  return id.slice(0, 12);
}

/** Pads columns of a table of strings to equal width. */
export function columns(rows: string[][]): string[] {
  const widths: number[] = [];
  for (const row of rows) {
    for (const [i, cell] of row.entries()) widths[i] = Math.max(widths[i] ?? 0, cell.length);
  }
  return rows.map((row) =>
    row
      .map((cell, i) => (i === row.length - 1 ? cell : cell.padEnd(widths[i]!)))
      .join("  ")
      .trimEnd(),
  );
}
