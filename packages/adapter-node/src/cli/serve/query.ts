/**
 * The query parameters of the JSON routes, read and checked: a parameter
 * that is missing or out of range is `invalid_argument` (HTTP 400) naming
 * it, before any run is opened.
 */
import { RunledgerError } from "@runledger/core";

function invalid(message: string, parameter: string): RunledgerError {
  return new RunledgerError("invalid_argument", message, { details: { parameter } });
}

/** A parameter the route needs. */
export function required(query: URLSearchParams, name: string): string {
  const value = query.get(name);
  if (value === null) throw invalid(`the ${name} parameter is missing`, name);
  return value;
}

/** A parameter that may be left out. */
export function optional(query: URLSearchParams, name: string): string | undefined {
  return query.get(name) ?? undefined;
}

/** A whole number in [min, max], or undefined when the parameter is absent. */
export function whole(
  query: URLSearchParams,
  name: string,
  range: { min: number; max: number },
): number | undefined {
  const text = query.get(name);
  if (text === null) return undefined;
  const value = /^\d{1,16}$/.test(text) ? Number(text) : Number.NaN;
  if (!Number.isSafeInteger(value) || value < range.min || value > range.max) {
    throw invalid(
      `the ${name} parameter is a whole number from ${range.min} to ${range.max}; got ${JSON.stringify(text)}`,
      name,
    );
  }
  return value;
}
