/**
 * The CLI's rewording of library errors, called directly: the failures a
 * test cannot provoke through the command (another process holding the
 * lock; a file the test's user may not write, when tests run as root) are
 * checked here, and so is what every rewording keeps of the library's error.
 */
import { RunledgerError } from "@runledger/core";
import { describe, expect, it } from "vitest";
import { forOperator } from "../src/cli/operator.js";

const reworded = async (error: unknown, asked: Parameters<typeof forOperator>[1]) =>
  (await forOperator(error, asked)) as RunledgerError;

describe("forOperator", () => {
  it("keeps the code, the details and the SQLite code, and holds the library's error as cause", async () => {
    const library = new RunledgerError(
      "busy",
      "database is locked (retry later or raise the busy timeout)",
      {
        sqliteCode: "SQLITE_BUSY",
        details: { attempts: 3 },
      },
    );
    const shown = await reworded(library, { file: "run.db" });
    expect(shown).toBeInstanceOf(RunledgerError);
    expect(shown.code).toBe("busy");
    expect(shown.sqliteCode).toBe("SQLITE_BUSY");
    expect(shown.details).toEqual({ attempts: 3 });
    expect(shown.cause).toBe(library);
    expect(shown.message).toBe(
      "run.db is locked by another process that is writing to it; run this command again once that process is done",
    );
  });

  it("names the file a command writes when that is not the one it reads (fork's target)", async () => {
    const library = new RunledgerError(
      "read_only",
      "attempt to write a readonly database (open it writable)",
    );
    const shown = await reworded(library, { file: "source.db", writes: "target.db" });
    expect(shown.message).toMatch(
      /^cannot write to target\.db: check that you may write the file and its directory/,
    );
    expect(shown.message).not.toMatch(/open it writable/);
  });

  it("leaves an error whose message already speaks to operators as it is", async () => {
    const library = new RunledgerError(
      "corrupt",
      "cannot open run.db: SQLite reports it damaged; restore it from a copy",
    );
    expect(await forOperator(library, { file: "run.db" })).toBe(library);
    const other = new Error("EACCES");
    expect(await forOperator(other, { file: "run.db" })).toBe(other);
  });

  it("keeps a --root the operator gave in the command it suggests", async () => {
    const root = "a".repeat(64);
    const library = new RunledgerError("not_a_file", "docs is a directory; use list or walk");
    const shown = await reworded(library, { file: "run.db", path: "docs", root });
    expect(shown.message).toBe(
      `"docs" is a directory, not a file: list it with \`runledger ls run.db docs --root ${root}\``,
    );
  });
});
