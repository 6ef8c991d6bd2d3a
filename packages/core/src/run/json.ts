import { RunledgerError } from "../port/errors.js";

export type JsonValue =
  | null
  | boolean
  | number
  | string
  | JsonValue[]
  | { [key: string]: JsonValue };
export type JsonObject = { [key: string]: JsonValue };

const MAX_DEPTH = 256;

/**
 * Serializes a value that must be JSON exactly: no undefined, function,
 * symbol, bigint, non-finite number, cycle or class instance, each of which
 * JSON.stringify would silently drop, change or choke on. Refused with
 * `invalid_json` before anything is written.
 */
export function toJsonText(value: unknown, what: string, requireObject = false): string {
  if (requireObject && !isPlainObject(value)) {
    throw new RunledgerError("invalid_json", `${what} must be a plain JSON object`);
  }
  check(value, what, 0, new Set());
  return JSON.stringify(value);
}

function check(value: unknown, path: string, depth: number, seen: Set<object>): void {
  if (depth > MAX_DEPTH) {
    throw new RunledgerError("invalid_json", `${path} nests deeper than ${MAX_DEPTH} levels`);
  }
  if (value === null || typeof value === "string" || typeof value === "boolean") return;
  if (typeof value === "number") {
    if (Number.isFinite(value)) return;
    throw new RunledgerError("invalid_json", `${path} is ${value}, which JSON cannot hold`);
  }
  if (typeof value !== "object") {
    throw new RunledgerError(
      "invalid_json",
      `${path} is a ${typeof value}, which JSON cannot hold`,
    );
  }
  if (seen.has(value)) throw new RunledgerError("invalid_json", `${path} refers to itself`);
  seen.add(value);
  if (Array.isArray(value)) {
    for (const [i, item] of value.entries()) check(item, `${path}[${i}]`, depth + 1, seen);
  } else if (isPlainObject(value)) {
    for (const [key, item] of Object.entries(value)) {
      check(item, `${path}.${key}`, depth + 1, seen);
    }
  } else {
    throw new RunledgerError("invalid_json", `${path} is a class instance; use plain objects`);
  }
  seen.delete(value);
}

function isPlainObject(value: unknown): value is Record<string, unknown> {
  if (value === null || typeof value !== "object" || Array.isArray(value)) return false;
  const prototype = Object.getPrototypeOf(value);
  return prototype === Object.prototype || prototype === null;
}
