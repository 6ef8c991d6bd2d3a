/**
 * Strict arguments. An options object or a change set with a name this
 * build does not know is refused before anything is read or written: a typo
 * (`{ oder: "desc" }`, `{ cpy: … }`) would otherwise be ignored, and the
 * caller would get a silently different answer — the whole journal instead
 * of its newest page, an apply without the copy it asked for.
 */
import { RunledgerError } from "./errors.js";

/**
 * Refuses `value` unless it is undefined or a plain object whose every own
 * name is in `known`. `where` names the argument in the message
 * ("journal.list's options").
 */
export function checkNames(value: unknown, known: readonly string[], where: string): void {
  if (value === undefined) return;
  if (typeof value !== "object" || value === null || Array.isArray(value)) {
    throw new RunledgerError("invalid_argument", `${where} must be an object`);
  }
  for (const name of Object.keys(value)) {
    if (!known.includes(name)) {
      throw new RunledgerError(
        "invalid_argument",
        `${where} has no option ${JSON.stringify(name)}; the known names are ${known.join(", ")}`,
        { details: { name, known } },
      );
    }
  }
}
