/**
 * What the suite asks of a keyed-writer process and what it answers. The
 * writer creates a run (when absent) and lands one keyed step — an event
 * and a file, in `lease.transact(fn, { key: KEYED_STEP })` — counting every
 * statement its driver issues; with `killAt` it kills itself with SIGKILL
 * just before that statement, leaving the step landed or not, unanswered.
 */
import type { RunTransaction } from "@runledger/core";
import type { DriverSource, FailedMessage } from "./common.js";

/** The key of the one step the writer lands. */
export const KEYED_STEP = "step-1";

/** The step: an event and a file, the same in the writer and in the suite's retry. */
export async function keyedStep(tx: RunTransaction): Promise<void> {
  await tx.journal.append({ step: KEYED_STEP });
  await tx.workspace.apply({ put: { "step.txt": KEYED_STEP } });
}

export interface KeyedWriterRequest extends DriverSource {
  readonly location: string;
  /** Kill this process just before its nth statement (1-based); absent: run to the end. */
  readonly killAt?: number;
}

export type KeyedWriterReport =
  | { readonly state: "done"; readonly statements: number }
  | FailedMessage;
