/**
 * Partition names. A partition is the unit a commit lands in, named from its
 * parts:
 *
 *   run--{workflowId}--{runId}
 *   config--{model|workflow|vault}--{name}
 *   definition--{id}
 *
 * The naming is injective: two different inputs never share a name. Each
 * component is escaped so that it never contains `--` and never begins or
 * ends with `-`; then every `--` in a name is a separator, and `parsePartition`
 * recovers the parts exactly. Escapes are `%` + two upper-case hex digits of
 * the UTF-16 code unit, used for: `%` itself, control characters
 * (U+0000–U+001F, U+007F), `/` and `\`, and a `-` that is first, last or next
 * to another `-`. Everything else, including non-ASCII text, is kept as is,
 * so ordinary names stay readable (`run--nightly-build--r1`).
 *
 * Components are 1 to 512 code units of well-formed Unicode (a lone
 * surrogate would be stored as U+FFFD, merging two names). A name is accepted
 * only in its canonical spelling: parse then format must give it back.
 */

import { isWellFormed } from "../port/text.js";
import { CONFIG_KINDS, type ConfigKind } from "./intents.js";
import { invalidChange } from "./invalid.js";

export const MAX_COMPONENT_LENGTH = 512;
const SEPARATOR = "--";

export type PartitionOf =
  | { readonly kind: "run"; readonly workflowId: string; readonly runId: string }
  | { readonly kind: "config"; readonly config: ConfigKind; readonly name: string }
  | { readonly kind: "definition"; readonly id: string };

export function runPartition(workflowId: string, runId: string): string {
  return `run${SEPARATOR}${escapeComponent(workflowId, "workflowId")}${SEPARATOR}${escapeComponent(runId, "runId")}`;
}

export function configPartition(config: ConfigKind, name: string): string {
  if (!(CONFIG_KINDS as readonly string[]).includes(config)) {
    throw invalidChange(
      "invalid_partition",
      `a config partition is one of ${CONFIG_KINDS.join(", ")}; got ${JSON.stringify(config)}`,
    );
  }
  return `config${SEPARATOR}${config}${SEPARATOR}${escapeComponent(name, "name")}`;
}

export function definitionPartition(id: string): string {
  return `definition${SEPARATOR}${escapeComponent(id, "id")}`;
}

/** The name of the partition `of` describes. */
export function partitionName(of: PartitionOf): string {
  switch (of.kind) {
    case "run":
      return runPartition(of.workflowId, of.runId);
    case "config":
      return configPartition(of.config, of.name);
    case "definition":
      return definitionPartition(of.id);
    default:
      throw invalidChange("invalid_partition", "a partition is of kind run, config or definition");
  }
}

/** The parts of a partition name; refuses a malformed or non-canonical name. */
export function parsePartition(name: string): PartitionOf {
  const refuse = (why: string) =>
    invalidChange("invalid_partition", `${JSON.stringify(name)} is not a partition name: ${why}`, {
      partition: name,
    });
  if (typeof name !== "string") throw refuse("not a string");
  const parts = name.split(SEPARATOR);
  const decoded = parts.slice(1).map((part) => unescapeComponent(part));
  if (decoded.some((part) => part === undefined)) throw refuse("a malformed % escape");
  const [a, b] = decoded as string[];
  let parsed: PartitionOf;
  if (parts[0] === "run" && parts.length === 3) {
    parsed = { kind: "run", workflowId: a!, runId: b! };
  } else if (parts[0] === "config" && parts.length === 3) {
    if (!(CONFIG_KINDS as readonly string[]).includes(a!)) {
      throw refuse(`the config kind must be one of ${CONFIG_KINDS.join(", ")}`);
    }
    parsed = { kind: "config", config: a as ConfigKind, name: b! };
  } else if (parts[0] === "definition" && parts.length === 2) {
    parsed = { kind: "definition", id: a! };
  } else {
    throw refuse(
      "expected run--{workflowId}--{runId}, config--{model|workflow|vault}--{name} or definition--{id}",
    );
  }
  let canonical: string;
  try {
    canonical = partitionName(parsed);
  } catch (error) {
    throw refuse(error instanceof Error ? error.message : String(error));
  }
  if (canonical !== name) throw refuse(`its canonical spelling is ${JSON.stringify(canonical)}`);
  return parsed;
}

export function isRunPartition(name: string): boolean {
  return name.startsWith(`run${SEPARATOR}`);
}

/** Escapes one component; refuses an empty, over-long or ill-formed one. */
export function escapeComponent(value: string, what = "component"): string {
  if (typeof value !== "string" || value.length < 1 || value.length > MAX_COMPONENT_LENGTH) {
    throw invalidChange(
      "invalid_partition",
      `a partition's ${what} must be a string of 1 to ${MAX_COMPONENT_LENGTH} characters`,
      { [what]: value },
    );
  }
  if (!isWellFormed(value)) {
    throw invalidChange(
      "invalid_partition",
      `a partition's ${what} holds a lone surrogate (not well-formed Unicode)`,
    );
  }
  let out = "";
  const last = value.length - 1;
  for (let i = 0; i <= last; i++) {
    const char = value[i]!;
    const unit = value.charCodeAt(i);
    const escaped =
      char === "%" ||
      char === "/" ||
      char === "\\" ||
      unit < 0x20 ||
      unit === 0x7f ||
      (char === "-" && (i === 0 || i === last || value[i - 1] === "-" || value[i + 1] === "-"));
    out += escaped ? `%${unit.toString(16).toUpperCase().padStart(2, "0")}` : char;
  }
  return out;
}

/** The inverse of escapeComponent on canonical input; undefined for a malformed escape. */
export function unescapeComponent(escaped: string): string | undefined {
  let out = "";
  for (let i = 0; i < escaped.length; i++) {
    const char = escaped[i]!;
    if (char !== "%") {
      out += char;
      continue;
    }
    const hex = escaped.slice(i + 1, i + 3);
    if (!/^[0-9A-F]{2}$/.test(hex)) return undefined;
    out += String.fromCharCode(Number.parseInt(hex, 16));
    i += 2;
  }
  return out;
}
