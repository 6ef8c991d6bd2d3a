/**
 * The JSON value rules: journal records, run definitions and documents must
 * be JSON exactly, so they are checked and serialized by one function that
 * refuses what `JSON.stringify` would silently change. In port/ because
 * run/, workspace/ and repositories/ all take JSON values.
 */
import { RunledgerError } from "./errors.js";

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
  const path: (string | number)[] = [];
  const problem = check(value, path, []);
  if (problem !== undefined)
    throw new RunledgerError("invalid_json", `${describe(what, path)} ${problem}`);
  return JSON.stringify(value);
}

/**
 * Why `value` is not JSON exactly, or undefined when it is. `path` is left
 * pointing at the offending value; it is only turned into text on failure,
 * so a valid record costs no string building. `ancestors`: the objects and
 * arrays `value` is inside — meeting one of them again is a cycle (an array,
 * not a set: it is as deep as `path`, and a record is a few levels deep).
 */
function check(value: unknown, path: (string | number)[], ancestors: object[]): string | undefined {
  if (path.length > MAX_DEPTH) return `nests deeper than ${MAX_DEPTH} levels`;
  if (value === null || typeof value === "string" || typeof value === "boolean") return undefined;
  if (typeof value === "number") {
    return Number.isFinite(value) ? undefined : `is ${value}, which JSON cannot hold`;
  }
  if (typeof value !== "object") return `is a ${typeof value}, which JSON cannot hold`;
  if (ancestors.includes(value)) return "refers to itself";
  ancestors.push(value);
  if (Array.isArray(value)) {
    for (let i = 0; i < value.length; i++) {
      path.push(i);
      const problem = check(value[i], path, ancestors);
      if (problem !== undefined) return problem;
      path.pop();
    }
  } else if (isPlainObject(value)) {
    for (const key in value) {
      if (!Object.hasOwn(value, key)) continue;
      path.push(key);
      const problem = check(value[key], path, ancestors);
      if (problem !== undefined) return problem;
      path.pop();
    }
  } else {
    return "is a class instance; use plain objects";
  }
  ancestors.pop();
  return undefined;
}

function describe(what: string, path: readonly (string | number)[]): string {
  let text = what;
  for (const step of path) text += typeof step === "number" ? `[${step}]` : `.${step}`;
  return text;
}

function isPlainObject(value: unknown): value is Record<string, unknown> {
  if (value === null || typeof value !== "object" || Array.isArray(value)) return false;
  const prototype = Object.getPrototypeOf(value);
  return prototype === Object.prototype || prototype === null;
}
