/**
 * The refusals of a malformed typed change, in one place: one code
 * (`invalid_change`) with a reason per broken rule. (Keys and partition
 * names are checked for well-formed text by port/text.ts, as every text a
 * database stores is.)
 */
import { RunledgerError } from "../port/errors.js";

/**
 * Every way a typed change can be malformed is refused before anything is
 * staged, with one code (`invalid_change`) and a `details.reason` that says
 * which rule it broke, so a caller can branch without parsing messages.
 */
export type InvalidChangeReason =
  | "not_a_change"
  | "unknown_intent"
  | "invalid_partition"
  | "wrong_partition"
  | "no_ops"
  | "invalid_op"
  | "invalid_key"
  | "invalid_expectation"
  | "digest_mismatch";

export function invalidChange(
  reason: InvalidChangeReason,
  message: string,
  details: Record<string, unknown> = {},
): RunledgerError {
  return new RunledgerError("invalid_change", message, { details: { reason, ...details } });
}
