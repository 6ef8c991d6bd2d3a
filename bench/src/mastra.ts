/**
 * The workflow snapshot Mastra's loop persists, as the suites that race
 * Mastra's LibSQLStore build it: a new run's, and the same snapshot after a
 * step (its context gains the step's result). One definition, so the local
 * and the remote comparisons persist the same shape.
 */

export type MastraSnapshot = Record<string, unknown> & { context: Record<string, unknown> };

/** A new run's snapshot. */
export function newMastraSnapshot(runId: string, input: unknown): MastraSnapshot {
  return {
    runId,
    status: "running",
    value: {},
    context: { input },
    serializedStepGraph: [],
    activePaths: [],
    activeStepsPath: {},
    suspendedPaths: {},
    resumeLabels: {},
    waitingPaths: {},
    timestamp: Date.now(),
  };
}

/** Records step `step`'s success with `output` in the snapshot, as Mastra's loop does after it. */
export function addMastraStep(snapshot: MastraSnapshot, step: number, output: unknown): void {
  const now = Date.now();
  snapshot.context[`step-${step}`] = {
    status: "success",
    payload: { step },
    output,
    startedAt: now,
    endedAt: now,
  };
  snapshot.timestamp = now;
}
