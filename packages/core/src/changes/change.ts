/**
 * A typed change: an intent, the partition it lands in, and its ops. Changes
 * are checked whole before anything is staged — an unknown intent, a
 * malformed partition, a partition of the wrong kind for the intent, no ops
 * or a bad op are each `invalid_change` with their own `details.reason`.
 *
 * Build changes with `typedChange(intent, target, ops)`: it computes the
 * partition from the target, so the naming rules live in one place.
 */

import { checkNames } from "../port/options.js";
import {
  type AutoDefinitionIntent,
  type ConfigIntent,
  type ConfigKind,
  type Intent,
  intentHome,
  isIntent,
  type ModelIntent,
  type RunIntent,
} from "./intents.js";
import { invalidChange } from "./invalid.js";
import { type ChangeOp, checkOp, type PutOp, put, tombstone } from "./ops.js";
import { type PartitionOf, parsePartition, partitionName } from "./partitions.js";

export interface TypedChange {
  readonly intent: Intent;
  readonly partition: string;
  readonly ops: readonly ChangeOp[];
}

export interface RunTarget {
  readonly workflowId: string;
  readonly runId: string;
}
export interface ConfigTarget {
  readonly kind: ConfigKind;
  readonly name: string;
}
export interface ModelTarget {
  readonly kind: "model";
  readonly name: string;
}
export interface DefinitionTarget {
  readonly id: string;
}

/** What names the partition of an intent's change. */
export type TargetOf<I extends Intent> = I extends RunIntent
  ? RunTarget
  : I extends ModelIntent
    ? ModelTarget
    : I extends ConfigIntent
      ? ConfigTarget
      : I extends AutoDefinitionIntent
        ? DefinitionTarget
        : never;

/** Builds and checks a change: the partition comes from the target. */
export function typedChange<I extends Intent>(
  intent: I,
  target: TargetOf<I>,
  ops: readonly ChangeOp[],
): TypedChange {
  if (!isIntent(intent)) throw unknownIntent(intent);
  const home = intentHome(intent).partition;
  const t = target as Partial<RunTarget & ConfigTarget & DefinitionTarget>;
  const of: PartitionOf =
    home === "run"
      ? { kind: "run", workflowId: t.workflowId!, runId: t.runId! }
      : home === "config"
        ? { kind: "config", config: t.kind!, name: t.name! }
        : { kind: "definition", id: t.id! };
  return checkChange({ intent, partition: partitionName(of), ops });
}

/**
 * Checks a change built by hand (or received): returns it as a frozen copy
 * of exactly the fields the log uses, or throws `invalid_change`.
 */
export function checkChange(value: unknown): TypedChange {
  if (value === null || typeof value !== "object") {
    throw invalidChange("not_a_change", "a typed change is an object { intent, partition, ops }");
  }
  const change = value as { intent?: unknown; partition?: unknown; ops?: unknown };
  if (!isIntent(change.intent)) throw unknownIntent(change.intent);
  const intent = change.intent;
  if (typeof change.partition !== "string") {
    throw invalidChange("invalid_partition", "a typed change names its partition as a string", {
      intent,
    });
  }
  const partition = change.partition;
  const parsed = parsePartition(partition);
  const home = intentHome(intent);
  const fits =
    parsed.kind === home.partition &&
    (parsed.kind !== "config" || (home.configKinds ?? []).includes(parsed.config));
  if (!fits) {
    const where =
      home.partition === "config"
        ? `config--{${(home.configKinds ?? []).join("|")}}--{name}`
        : home.partition === "run"
          ? "run--{workflowId}--{runId}"
          : "definition--{id}";
    throw invalidChange(
      "wrong_partition",
      `intent ${intent} belongs on ${where}, not on ${JSON.stringify(partition)}`,
      { intent, partition },
    );
  }
  if (!Array.isArray(change.ops) || change.ops.length === 0) {
    throw invalidChange("no_ops", `a ${intent} change needs at least one op`, {
      intent,
      partition,
    });
  }
  const ops = change.ops.map((op, index) => checkOp(op, index));
  return Object.freeze({ intent, partition, ops: Object.freeze(ops) });
}

/**
 * A definition rename, as the two changes it is, in commit order: a
 * `definition.rename-to` put with `expect: "absent"` in the new name's
 * partition, then a `definition.rename-from` tombstone with
 * `expect: "present"` in the old one. Stage both in one unit.
 */
export function renameDefinition(options: {
  readonly kind: ConfigKind;
  readonly from: string;
  readonly to: string;
  /** The definition document in the new partition. */
  readonly put: { readonly key: string; readonly content: Uint8Array | string };
  /** The key to remove from the old partition; default the same key. */
  readonly fromKey?: string;
}): [TypedChange, TypedChange] {
  checkNames(options, ["kind", "from", "to", "put", "fromKey"], "renameDefinition's options");
  checkNames(options.put, ["key", "content"], "renameDefinition's put");
  const added: PutOp = put(options.put.key, options.put.content, { expect: "absent" });
  return [
    typedChange("definition.rename-to", { kind: options.kind, name: options.to }, [added]),
    typedChange("definition.rename-from", { kind: options.kind, name: options.from }, [
      tombstone(options.fromKey ?? options.put.key, { expect: "present" }),
    ]),
  ];
}

function unknownIntent(intent: unknown) {
  return invalidChange(
    "unknown_intent",
    `${JSON.stringify(intent)} is not an intent; see INTENTS for the list`,
    { intent },
  );
}
