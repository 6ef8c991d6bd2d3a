/**
 * A run as the catalog lists it, read from the run itself in one snapshot:
 * its row and its newest sequence. Two statements, taken at open, stop,
 * resume and release, never per step.
 */
import type { RunEntry } from "./catalog/types.js";
import type { RunSnapshot } from "./scopes.js";

export async function readEntry(location: string, r: RunSnapshot): Promise<RunEntry> {
  const run = await r.run.get();
  const [newest] = await r.journal.list({ order: "desc", limit: 1 });
  return {
    location,
    workflowId: run.workflowId,
    runId: run.runId,
    status: run.status,
    stopReason: run.stopReason,
    createdAt: run.createdAt,
    updatedAt: run.updatedAt,
    lastSequence: newest?.sequence ?? 0,
  };
}
