/**
 * Journal mode and durability, applied the same way by every adapter's
 * `configure` and checked afterwards: SQLite may quietly keep another
 * journal mode.
 */
import type { ConnectionSettings, DriverConnection } from "./driver.js";
import { RunledgerError } from "./errors.js";

/**
 * Applies journal mode and synchronous through a connection, and checks that
 * SQLite took the journal mode (it silently keeps another one on a read-only
 * file or an in-memory database). Adapters call it from `configure`.
 */
export async function applySettings(
  connection: Pick<DriverConnection, "execute" | "executeScript">,
  settings: ConnectionSettings,
): Promise<void> {
  if (settings.journalMode !== undefined) {
    const { rows } = await connection.execute(`PRAGMA journal_mode = ${settings.journalMode}`);
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
    // A script, not a statement: nothing to read back, and drivers run a
    // script without preparing a statement object for it.
    await connection.executeScript(`PRAGMA synchronous = ${settings.synchronous}`);
  }
}
