/**
 * What several of core's test files share: temporary directories removed
 * when the file's tests end, the refusal a call throws, and how some work
 * ended.
 */
import fs from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, expect } from "vitest";
import { isRunledgerError, RunledgerError } from "../src/port/errors.js";

const made: string[] = [];
afterAll(() => {
  for (const directory of made) fs.rmSync(directory, { recursive: true, force: true });
});

/** A fresh directory, by its real path (the temporary directory may be behind a symlink). */
export function temporaryDirectory(prefix: string): string {
  const path = fs.realpathSync.native(fs.mkdtempSync(join(tmpdir(), prefix)));
  made.push(path);
  return path;
}

/** The RunledgerError `action` throws; the test fails when it throws none, or another error. */
export function refusal(action: () => unknown): RunledgerError {
  try {
    action();
  } catch (error) {
    expect(error).toBeInstanceOf(RunledgerError);
    return error as RunledgerError;
  }
  return expect.fail("expected a RunledgerError");
}

/** How `work` ended: "ok", the RunledgerError's code, or any other error as text. */
export async function codeOf(work: Promise<unknown>): Promise<string> {
  try {
    await work;
    return "ok";
  } catch (error) {
    return isRunledgerError(error) ? error.code : String(error);
  }
}
