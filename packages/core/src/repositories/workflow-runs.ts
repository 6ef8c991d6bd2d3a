/**
 * The workflow-run repository: a run's record and its snapshots, all in
 * the run's partition (`run--{workflowId}--{runId}`): `run.json` and
 * `snapshots/{id}.json`. Every write goes through the route: documents and
 * route-1 signals first, then `stageTyped` with this repository's builders.
 *
 * Snapshot ids sort in path order; "newest" means last in that order, so
 * GC keeps the last `keep` and supersede keeps only the one just saved.
 * Reads that only a typed change needs (the digest of a record or snapshot
 * being replaced) happen only while typed staging is active.
 */
import type { RunTarget } from "../changes/change.js";
import { runPartition } from "../changes/partitions.js";
import type { JsonObject } from "../port/json.js";
import { checkNames } from "../port/options.js";
import { stageTyped, typedStagingActive } from "../routing/route.js";
import { buildersOf, type ChangeBuilders, type RepositoryOptions } from "./builders.js";
import type { Datastore } from "./datastore/datastore.js";
import {
  RUN_RECORD_KEY,
  runPath,
  SNAPSHOTS_DIRECTORY,
  snapshotKey,
  splitDocumentPath,
} from "./layout.js";
import { contentBytes, deleteDocument, documentExists, writeDocument } from "./write-through.js";

export class WorkflowRunRepository {
  readonly #datastore: Datastore;
  readonly #builders: ChangeBuilders;

  constructor(datastore: Datastore, options: RepositoryOptions = {}) {
    this.#datastore = datastore;
    this.#builders = buildersOf(options);
  }

  async create(run: RunTarget, record: JsonObject): Promise<void> {
    const path = runPath(run.workflowId, run.runId, RUN_RECORD_KEY);
    const bytes = contentBytes(JSON.stringify(record));
    const hook = this.#datastore.hook;
    await this.#datastore.write("runs.create", async (w) => {
      if ((await w.digest(path)) !== undefined) throw documentExists(`run ${path}`);
      await writeDocument(w, hook, path, bytes);
      await stageTyped(hook, () => this.#builders.runCreate(run, bytes));
    });
  }

  async update(run: RunTarget, record: JsonObject): Promise<void> {
    const path = runPath(run.workflowId, run.runId, RUN_RECORD_KEY);
    const bytes = contentBytes(JSON.stringify(record));
    const hook = this.#datastore.hook;
    await this.#datastore.write("runs.update", async (w) => {
      const prior = typedStagingActive(hook) ? await w.digest(path) : undefined;
      await writeDocument(w, hook, path, bytes);
      await stageTyped(hook, () => this.#builders.runUpdate(run, bytes, prior));
    });
  }

  async get(run: RunTarget): Promise<JsonObject | undefined> {
    const path = runPath(run.workflowId, run.runId, RUN_RECORD_KEY);
    const bytes = await this.#datastore.read("runs.get", (r) => r.get(path));
    return bytes === undefined
      ? undefined
      : (JSON.parse(new TextDecoder().decode(bytes)) as JsonObject);
  }

  /** Deletes the run: its record and every snapshot, one tombstone each. */
  async delete(run: RunTarget): Promise<number> {
    const partition = runPartition(run.workflowId, run.runId);
    const hook = this.#datastore.hook;
    return this.#datastore.write("runs.delete", async (w) => {
      const paths = await w.list(partition);
      for (const path of paths) await deleteDocument(w, hook, path);
      const keys = paths.map((path) => splitDocumentPath(path).key);
      await stageTyped(hook, () => this.#builders.runDelete(run, keys));
      return paths.length;
    });
  }

  async saveSnapshot(
    run: RunTarget,
    snapshotId: string,
    content: Uint8Array | string,
  ): Promise<void> {
    const key = snapshotKey(snapshotId);
    const path = runPath(run.workflowId, run.runId, key);
    const bytes = contentBytes(content);
    const hook = this.#datastore.hook;
    await this.#datastore.write("run-snapshots.save", async (w) => {
      const prior = typedStagingActive(hook) ? await w.digest(path) : undefined;
      await writeDocument(w, hook, path, bytes);
      await stageTyped(hook, () => this.#builders.snapshotSave(run, key, bytes, prior));
    });
  }

  async deleteSnapshot(run: RunTarget, snapshotId: string): Promise<boolean> {
    const key = snapshotKey(snapshotId);
    const path = runPath(run.workflowId, run.runId, key);
    const hook = this.#datastore.hook;
    return this.#datastore.write("run-snapshots.delete", async (w) => {
      if (!(await deleteDocument(w, hook, path))) return false;
      await stageTyped(hook, () => this.#builders.snapshotDelete(run, [key]));
      return true;
    });
  }

  /** Deletes all but the newest `keep` snapshots; per-key tombstones, split at MAX_COMMIT_OPS. */
  async collectSnapshots(run: RunTarget, options: { readonly keep: number }): Promise<number> {
    checkNames(options, ["keep"], "collectSnapshots's options");
    const hook = this.#datastore.hook;
    return this.#datastore.write("run-snapshots.gc", async (w) => {
      const paths = await w.list(runPath(run.workflowId, run.runId, SNAPSHOTS_DIRECTORY));
      const doomed = paths.slice(0, Math.max(0, paths.length - Math.max(0, options.keep)));
      for (const path of doomed) await deleteDocument(w, hook, path);
      if (doomed.length === 0) return 0;
      const keys = doomed.map((path) => splitDocumentPath(path).key);
      await stageTyped(hook, () => this.#builders.snapshotDelete(run, keys));
      return doomed.length;
    });
  }

  /** Saves a snapshot that supersedes every other: the save, then a tombstone per other snapshot. */
  async supersedeSnapshots(
    run: RunTarget,
    snapshotId: string,
    content: Uint8Array | string,
  ): Promise<number> {
    const key = snapshotKey(snapshotId);
    const path = runPath(run.workflowId, run.runId, key);
    const bytes = contentBytes(content);
    const hook = this.#datastore.hook;
    return this.#datastore.write("run-snapshots.supersede", async (w) => {
      const prior = typedStagingActive(hook) ? await w.digest(path) : undefined;
      const others = (await w.list(runPath(run.workflowId, run.runId, SNAPSHOTS_DIRECTORY))).filter(
        (other) => other !== path,
      );
      await writeDocument(w, hook, path, bytes);
      for (const other of others) await deleteDocument(w, hook, other);
      const keys = others.map((other) => splitDocumentPath(other).key);
      await stageTyped(hook, () => [
        ...this.#builders.snapshotSave(run, key, bytes, prior),
        ...(keys.length === 0 ? [] : this.#builders.snapshotDelete(run, keys)),
      ]);
      return others.length;
    });
  }
}
