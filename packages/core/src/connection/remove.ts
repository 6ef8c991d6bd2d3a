/**
 * Removing a database (`RunStore.remove` and the like): only one the
 * provider has recognized, and only while nothing else has it open. Switching
 * a local file out of WAL, which SQLite allows only to a connection alone on
 * it, is the test; the driver then deletes the files under the write lock.
 */
import type { Driver } from "../port/driver.js";
import { isRunledgerError, RunledgerError } from "../port/errors.js";
import { retryWhileBusy } from "../transaction/busy.js";
import { runWriteTransaction } from "../transaction/owner.js";
import type { Entry } from "./entry.js";

/** The refusal of a remove: something else has the database. */
export function inUse(location: string, why: string, cause?: unknown): RunledgerError {
  return new RunledgerError(
    "run_in_use",
    `cannot remove ${location}: ${why}; release every lease of it (in every process) and try again — nothing was deleted`,
    cause === undefined ? {} : { cause },
  );
}

/** Runs `step`, reading a `busy` answer as another connection having the database open. */
export async function whileAlone(location: string, step: () => Promise<void>): Promise<void> {
  try {
    await step();
  } catch (error) {
    if (isRunledgerError(error, "busy") || isRunledgerError(error, "journal_mode_refused")) {
      throw inUse(location, "another connection (another process) has it open", error);
    }
    throw error;
  }
}

/**
 * Deletes the database of `entry`, in its turn, once the remover's lease is
 * the only one: a local file goes out of WAL and the driver deletes it
 * under the write lock; then the entry closes (`forget` drops it from the
 * provider); a database on a server is deleted by the driver once this
 * connection to it is closed — whether another client still uses it is the
 * server's to know.
 */
export async function deleteDatabase(
  entry: Entry,
  remove: NonNullable<Driver["remove"]>,
  busyTimeoutMs: number,
  forget: () => void,
): Promise<void> {
  const canonical = entry.location;
  const local = entry.connection.remote !== true;
  if (local) {
    let removed = false;
    await whileAlone(canonical, async () => {
      // Waited for like any lock: a connection on its way out (a closed
      // client whose native handle is freed by a finalizer) lets go soon.
      await retryWhileBusy(
        () => entry.connection.configure({ journalMode: "delete" }),
        busyTimeoutMs,
        `cannot remove ${canonical}`,
      );
      await runWriteTransaction(
        entry,
        async () => {
          await remove(canonical);
          removed = true;
        },
        busyTimeoutMs,
      );
    }).catch((error: unknown) => {
      // The files are gone: ending a transaction on them changes nothing.
      if (!removed) throw error;
    });
  }
  entry.state = "closed";
  forget();
  await entry.connection.close();
  // A server deletes a database its own way, with no connection of ours on it.
  if (!local) await remove(canonical);
}
