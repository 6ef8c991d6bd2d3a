/**
 * The change builders: pure functions from what a repository wrote (and,
 * on format 3, what it read just before) to the typed changes of that
 * write. Repositories call them only inside `stageTyped`, so on format 2
 * none ever runs.
 *
 * Rules every builder keeps (docs/routing.md lists the mapping):
 * - one op per key: a bulk operation becomes per-key puts or tombstones;
 * - every op carries the expectation the repository knew to be true
 *   (`absent` for a create, `{ sha256 }` of the replaced bytes for an
 *   edit, `present` for a delete), so a lost or extra change is refused
 *   rather than silently merged;
 * - a change over MAX_COMMIT_OPS keys is split into changes of at most
 *   MAX_COMMIT_OPS, in key order.
 *
 * The table is injectable (repository options), which is how the
 * conformance suite spies on builders and reduces their output.
 */
import { splitIntoBatches } from "../changes/batches.js";
import type { RunTarget } from "../changes/change.js";
import { renameDefinition, type TypedChange, typedChange } from "../changes/change.js";
import type { ConfigKind } from "../changes/intents.js";
import { type Expectation, put, tombstone } from "../changes/ops.js";
import { checkNames } from "../port/options.js";
import {
  DEFINITION_KEY,
  EVALUATED_DEFINITION_KEY,
  EVALUATED_WORKFLOW_KEY,
  RUN_RECORD_KEY,
} from "./layout.js";

const replacing = (prior: string | undefined): Expectation =>
  prior === undefined ? "absent" : { sha256: prior };

const present = (key: string) => tombstone(key, { expect: "present" });

export const CHANGE_BUILDERS = {
  runCreate: (run: RunTarget, record: Uint8Array): TypedChange[] => [
    typedChange("run.create", run, [put(RUN_RECORD_KEY, record, { expect: "absent" })]),
  ],
  runUpdate: (run: RunTarget, record: Uint8Array, prior: string | undefined): TypedChange[] => [
    typedChange("run.update", run, [put(RUN_RECORD_KEY, record, { expect: replacing(prior) })]),
  ],
  /** Every key the run's partition held, tombstoned. */
  runDelete: (run: RunTarget, keys: readonly string[]): TypedChange[] =>
    splitIntoBatches(keys).map((slice) => typedChange("run.delete", run, slice.map(present))),
  snapshotSave: (
    run: RunTarget,
    key: string,
    bytes: Uint8Array,
    prior: string | undefined,
  ): TypedChange[] => [
    typedChange("run-snapshot.save", run, [put(key, bytes, { expect: replacing(prior) })]),
  ],
  /** One delete, GC or supersede: per-key tombstones, split at MAX_COMMIT_OPS. */
  snapshotDelete: (run: RunTarget, keys: readonly string[]): TypedChange[] =>
    splitIntoBatches(keys).map((slice) =>
      typedChange("run-snapshot.delete", run, slice.map(present)),
    ),
  definitionCreate: (kind: ConfigKind, name: string, bytes: Uint8Array): TypedChange[] => [
    typedChange("definition.create", { kind, name }, [
      put(DEFINITION_KEY, bytes, { expect: "absent" }),
    ]),
  ],
  definitionEdit: (
    kind: ConfigKind,
    name: string,
    bytes: Uint8Array,
    prior: string,
  ): TypedChange[] => [
    typedChange("definition.edit", { kind, name }, [
      put(DEFINITION_KEY, bytes, { expect: { sha256: prior } }),
    ]),
  ],
  /** Every key the definition's partition held (the definition and its evaluated outputs). */
  definitionDelete: (kind: ConfigKind, name: string, keys: readonly string[]): TypedChange[] =>
    splitIntoBatches(keys).map((slice) =>
      typedChange("definition.delete", { kind, name }, slice.map(present)),
    ),
  /** The two-partition rename, in order; then the old partition's other keys, tombstoned. */
  definitionRename: (
    kind: ConfigKind,
    from: string,
    to: string,
    bytes: Uint8Array,
    leftovers: readonly string[],
  ): TypedChange[] => [
    ...renameDefinition({ kind, from, to, put: { key: DEFINITION_KEY, content: bytes } }),
    ...splitIntoBatches(leftovers).map((slice) =>
      typedChange("definition.delete", { kind, name: from }, slice.map(present)),
    ),
  ],
  evaluatedWorkflowSave: (
    kind: ConfigKind,
    name: string,
    bytes: Uint8Array,
    prior: string | undefined,
  ): TypedChange[] => [
    typedChange("evaluated-workflow.save", { kind, name }, [
      put(EVALUATED_WORKFLOW_KEY, bytes, { expect: replacing(prior) }),
    ]),
  ],
  evaluatedWorkflowDelete: (kind: ConfigKind, name: string): TypedChange[] => [
    typedChange("evaluated-workflow.delete", { kind, name }, [present(EVALUATED_WORKFLOW_KEY)]),
  ],
  evaluatedDefinitionSave: (
    name: string,
    bytes: Uint8Array,
    prior: string | undefined,
  ): TypedChange[] => [
    typedChange("evaluated-definition.save", { kind: "model", name }, [
      put(EVALUATED_DEFINITION_KEY, bytes, { expect: replacing(prior) }),
    ]),
  ],
  evaluatedDefinitionDelete: (name: string): TypedChange[] => [
    typedChange("evaluated-definition.delete", { kind: "model", name }, [
      present(EVALUATED_DEFINITION_KEY),
    ]),
  ],
  autoDefinitionSave: (id: string, bytes: Uint8Array, prior: string | undefined): TypedChange[] => [
    typedChange("auto-definition.save", { id }, [
      put(DEFINITION_KEY, bytes, { expect: replacing(prior) }),
    ]),
  ],
};

export type ChangeBuilders = typeof CHANGE_BUILDERS;
export type BuilderName = keyof ChangeBuilders;

export interface RepositoryOptions {
  /** Replaces builders (tests spy on them or reduce their output); default CHANGE_BUILDERS. */
  readonly builders?: Partial<ChangeBuilders>;
}

/** The builders a repository uses; its options and the builders' names are checked (strict arguments). */
export function buildersOf(options: RepositoryOptions = {}): ChangeBuilders {
  checkNames(options, ["builders"], "the repository's options");
  checkNames(options.builders, Object.keys(CHANGE_BUILDERS), "the repository's builders");
  return { ...CHANGE_BUILDERS, ...options.builders };
}
