/**
 * A run's unit of work. `withRunUnit` binds a fresh commit-log unit to the
 * hook for the length of a run, and decides it by how the run ended:
 *
 * - completed, failed, suspended or cancelled — the run reached an end the
 *   engine records: the unit commits (one commit per partition per batch,
 *   run partitions last, held back if a data partition was refused);
 * - interrupted or still running (an early stop), or a throw — the unit is
 *   abandoned: nothing it staged lands, never half a run.
 *
 * The unit is unbound before it is decided, on every path, so a hook is
 * never left pointing at a finished unit. Binding attached the datastore's
 * reconciler to the unit, so deciding it puts back the documents whose
 * staged change did not land — the refused and held-back partitions' keys on
 * commit (`result.reconciled`), every staged key on abandon (`reconciled`).
 */
import type { TypedChange } from "../changes/change.js";
import type {
  AbandonResult,
  CommitResult,
  DocumentReconciler,
  ReconciledKey,
  StagingScope,
} from "../commit-log/types.js";
import type { RunStatus } from "../run/types.js";
import type { ChangeHook } from "./hook.js";
import { bindUnit } from "./route.js";

export type RunEnding = RunStatus;

/** Endings whose unit commits. */
export const COMMITTING_ENDINGS: readonly RunEnding[] = [
  "completed",
  "failed",
  "suspended",
  "cancelled",
];

/** The unit a run stages into: CommitUnit fits. */
export interface RunUnit {
  stage(changes: TypedChange | readonly TypedChange[]): Promise<void>;
  /** Provisional staging, so a write that rolls back keeps nothing staged (see TypedStager). */
  openScope?(): Promise<StagingScope>;
  /** Takes the datastore's reconciler (see TypedStager). */
  attachReconciler?(reconciler: DocumentReconciler): void;
  commit(): Promise<CommitResult>;
  /** A CommitUnit answers what it reconciled (AbandonResult); any other answer counts as nothing. */
  abandon(): Promise<unknown>;
}

export type RunUnitOutcome<T> =
  | { readonly decision: "committed"; readonly value: T; readonly result: CommitResult }
  | {
      readonly decision: "abandoned";
      readonly value: T;
      /** The documents the abandon put back to what the log holds. */
      readonly reconciled: readonly ReconciledKey[];
    };

export async function withRunUnit<T extends { readonly status: RunEnding }>(
  hook: ChangeHook,
  unit: RunUnit,
  run: () => Promise<T>,
): Promise<RunUnitOutcome<T>> {
  const unbind = bindUnit(hook, unit);
  let value: T;
  try {
    value = await run();
  } catch (error) {
    unbind();
    await unit.abandon();
    throw error;
  }
  unbind();
  if (COMMITTING_ENDINGS.includes(value.status)) {
    return { decision: "committed", value, result: await unit.commit() };
  }
  const abandoned = await unit.abandon();
  return { decision: "abandoned", value, reconciled: reconciledBy(abandoned) };
}

function reconciledBy(answer: unknown): readonly ReconciledKey[] {
  const reconciled = (answer as Partial<AbandonResult> | undefined)?.reconciled;
  return Array.isArray(reconciled) ? reconciled : [];
}
