/**
 * Where repositories keep documents: a document's path is its typed
 * change's partition, a slash, and its key — `run--wf--r1/run.json`,
 * `config--model--m/definition.json`. Partition names never hold a slash
 * (changes/partitions escapes it), so the first slash splits a path back
 * into (partition, key) exactly, and the documents a repository wrote can
 * be compared one for one with what a read model caught up.
 */

import type { ConfigKind } from "../changes/intents.js";
import { configPartition, definitionPartition, runPartition } from "../changes/partitions.js";

export const RUN_RECORD_KEY = "run.json";
export const SNAPSHOTS_DIRECTORY = "snapshots";
export const DEFINITION_KEY = "definition.json";
export const EVALUATED_WORKFLOW_KEY = "evaluated-workflow.json";
export const EVALUATED_DEFINITION_KEY = "evaluated-definition.json";

export function snapshotKey(snapshotId: string): string {
  return `${SNAPSHOTS_DIRECTORY}/${snapshotId}.json`;
}

export function documentPath(partition: string, key: string): string {
  return `${partition}/${key}`;
}

export function runPath(workflowId: string, runId: string, key: string): string {
  return documentPath(runPartition(workflowId, runId), key);
}

export function configPath(kind: ConfigKind, name: string, key: string): string {
  return documentPath(configPartition(kind, name), key);
}

export function autoDefinitionPath(id: string): string {
  return documentPath(definitionPartition(id), DEFINITION_KEY);
}

/** (partition, key) of a repository path. */
export function splitDocumentPath(path: string): { partition: string; key: string } {
  const slash = path.indexOf("/");
  return { partition: path.slice(0, slash), key: path.slice(slash + 1) };
}
