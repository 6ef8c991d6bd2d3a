/**
 * Waiting out another process's lock: the retry loop for `busy`, with a
 * deadline, used wherever core starts a write transaction.
 */
import { isRunledgerError, RunledgerError } from "../port/errors.js";

/**
 * Across processes SQLite's own lock is the serialization point. A driver
 * waits in SQLite's busy handler for a short while; past that, core retries
 * with growing, jittered pauses that leave the event loop free, until the
 * deadline. Beyond the deadline the answer is `busy`, never a hang.
 */
export async function retryWhileBusy<T>(
  attempt: () => Promise<T>,
  deadlineMs: number,
  what: string,
  /** When the wait began: now, or before a first attempt made without a promise. */
  started = Date.now(),
): Promise<T> {
  let pause = 2;
  for (;;) {
    try {
      return await attempt();
    } catch (error) {
      if (!isRunledgerError(error, "busy")) throw error;
      const elapsed = Date.now() - started;
      if (elapsed >= deadlineMs) {
        throw new RunledgerError(
          "busy",
          `${what}: the database stayed locked by another connection for ${elapsed} ms ` +
            `(deadline ${deadlineMs} ms); retry later or raise busyTimeoutMs`,
          { cause: error, ...(error.sqliteCode ? { sqliteCode: error.sqliteCode } : {}) },
        );
      }
      const wait = Math.min(pause * (0.5 + Math.random()), deadlineMs - elapsed);
      await new Promise<void>((resolve) => setTimeout(resolve, wait));
      pause = Math.min(pause * 2, 50);
    }
  }
}
