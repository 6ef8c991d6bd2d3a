/**
 * Intents: what a typed change says it is doing. The list is closed — the
 * commit log's schema names every intent in a CHECK, so a new intent is a new
 * log format, never a silent addition.
 *
 * Each intent lives on one kind of partition, and some on one kind of
 * config partition only:
 * - run.* and run-snapshot.* on `run--{workflowId}--{runId}`;
 * - definition.* and evaluated-workflow.* on `config--{model|workflow|vault}--{name}`;
 * - evaluated-definition.* on the model config partition only;
 * - auto-definition.save on `definition--{id}`.
 */

export const INTENTS = [
  "run.create",
  "run.update",
  "run.delete",
  "run-snapshot.save",
  "run-snapshot.delete",
  "definition.create",
  "definition.edit",
  "definition.delete",
  "definition.rename-to",
  "definition.rename-from",
  "evaluated-workflow.save",
  "evaluated-workflow.delete",
  "evaluated-definition.save",
  "evaluated-definition.delete",
  "auto-definition.save",
] as const;

export type Intent = (typeof INTENTS)[number];

export type RunIntent = Extract<Intent, `run.${string}` | `run-snapshot.${string}`>;
export type ConfigIntent = Extract<Intent, `definition.${string}` | `evaluated-workflow.${string}`>;
export type ModelIntent = Extract<Intent, `evaluated-definition.${string}`>;
export type AutoDefinitionIntent = Extract<Intent, `auto-definition.${string}`>;

/** The three kinds of config partition. */
export const CONFIG_KINDS = ["model", "workflow", "vault"] as const;
export type ConfigKind = (typeof CONFIG_KINDS)[number];

/** Where an intent may be committed: a partition kind, and for config the config kinds allowed. */
export interface IntentHome {
  readonly partition: "run" | "config" | "definition";
  readonly configKinds?: readonly ConfigKind[];
}

const RUN: IntentHome = { partition: "run" };
const ANY_CONFIG: IntentHome = { partition: "config", configKinds: CONFIG_KINDS };
const MODEL_CONFIG: IntentHome = { partition: "config", configKinds: ["model"] };
const DEFINITION: IntentHome = { partition: "definition" };

const HOMES: Readonly<Record<Intent, IntentHome>> = Object.freeze({
  "run.create": RUN,
  "run.update": RUN,
  "run.delete": RUN,
  "run-snapshot.save": RUN,
  "run-snapshot.delete": RUN,
  "definition.create": ANY_CONFIG,
  "definition.edit": ANY_CONFIG,
  "definition.delete": ANY_CONFIG,
  "definition.rename-to": ANY_CONFIG,
  "definition.rename-from": ANY_CONFIG,
  "evaluated-workflow.save": ANY_CONFIG,
  "evaluated-workflow.delete": ANY_CONFIG,
  "evaluated-definition.save": MODEL_CONFIG,
  "evaluated-definition.delete": MODEL_CONFIG,
  "auto-definition.save": DEFINITION,
});

const KNOWN: ReadonlySet<string> = new Set(INTENTS);

export function isIntent(value: unknown): value is Intent {
  return typeof value === "string" && KNOWN.has(value);
}

/** Where `intent` may be committed. */
export function intentHome(intent: Intent): IntentHome {
  return HOMES[intent];
}

/** Run partitions commit last in a unit of work (docs/commit-log.md). */
export function isRunIntent(intent: Intent): intent is RunIntent {
  return HOMES[intent] === RUN;
}
