/**
 * The failure an action ends in, as the RunledgerError it must be: these
 * tests assert codes, so any other throw (or no throw) fails the test.
 */
import { RunledgerError } from "@runledger/core";

export async function failureOf(action: () => Promise<unknown>): Promise<RunledgerError> {
  try {
    await action();
  } catch (error) {
    if (error instanceof RunledgerError) return error;
    throw error;
  }
  throw new Error("expected the operation to fail, but it succeeded");
}
