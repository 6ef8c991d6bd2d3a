import type { ConnectionSettings, Executor } from "./driver.js";
import { RunledgerError } from "./errors.js";

/**
 * Applies journal mode and synchronous through any executor, and checks that
 * SQLite took the journal mode (it silently keeps another one on a read-only
 * file or an in-memory database). Adapters call it from `configure`.
 */
export async function applySettings(
  executor: Executor,
  settings: ConnectionSettings,
): Promise<void> {
  if (settings.journalMode !== undefined) {
    const { rows } = await executor.execute(`PRAGMA journal_mode = ${settings.journalMode}`);
    const mode = String(rows[0]?.journal_mode ?? "").toLowerCase();
    if (mode !== settings.journalMode) {
      throw new RunledgerError(
        "journal_mode_refused",
        `SQLite kept journal mode "${mode}" instead of "${settings.journalMode}"; ` +
          "the database may be read-only or in memory",
      );
    }
  }
  if (settings.synchronous !== undefined) {
    await executor.execute(`PRAGMA synchronous = ${settings.synchronous}`);
  }
}
