/**
 * The format marker: `{ format, minReaderFormat, writtenBy }`, stored as
 * JSON text in the datastore's one `format_marker` row.
 *
 * - No marker reads as format 2 (every datastore written before markers).
 * - A marker this build cannot read — a format or minReaderFormat above
 *   DATASTORE_FORMAT_MAX — is `datastore_format_unsupported`. This build
 *   writes, so it refuses any format it does not know even when an older
 *   reader would be allowed (minReaderFormat is for future readers).
 * - Anything else that is not exactly that shape (not JSON, a missing or
 *   extra field, a non-integer, minReaderFormat above format, an empty
 *   writtenBy) is `invalid_format_marker`.
 * Both refusals are decided reading only, before anything is written.
 */
import { RunledgerError } from "../../port/errors.js";
import type { DatastoreFormat } from "../../routing/hook.js";

export const DATASTORE_FORMAT_MAX = 3;
/** The writtenBy this build stamps on a marker. */
export const WRITTEN_BY = "runledger/0.1.0";

export interface FormatMarker {
  readonly format: number;
  readonly minReaderFormat: number;
  readonly writtenBy: string;
}

/** The marker as this build writes it for a format. */
export function markerFor(format: DatastoreFormat): FormatMarker {
  return { format, minReaderFormat: format, writtenBy: WRITTEN_BY };
}

export function serializeMarker(marker: FormatMarker): string {
  return JSON.stringify({
    format: marker.format,
    minReaderFormat: marker.minReaderFormat,
    writtenBy: marker.writtenBy,
  });
}

/** The format a stored marker (or its absence) says, or the refusal. */
export function formatOf(stored: string | undefined, location: string): DatastoreFormat {
  if (stored === undefined) return 2;
  const marker = parseMarker(stored, location);
  if (marker.format > DATASTORE_FORMAT_MAX || marker.minReaderFormat > DATASTORE_FORMAT_MAX) {
    throw new RunledgerError(
      "datastore_format_unsupported",
      `cannot open the datastore at ${location}: it is format ${marker.format} (readers need ` +
        `format ${marker.minReaderFormat}), written by ${marker.writtenBy}, and this build ` +
        `reads formats up to ${DATASTORE_FORMAT_MAX}; use a release that reads it. Nothing was changed`,
      { details: { marker } },
    );
  }
  return marker.format === 3 ? 3 : 2;
}

function parseMarker(stored: string, location: string): FormatMarker {
  const refuse = (why: string) =>
    new RunledgerError(
      "invalid_format_marker",
      `cannot open the datastore at ${location}: its format marker is garbled (${why}); ` +
        "restore the datastore from a copy. Nothing was changed",
      { details: { marker: stored.slice(0, 200) } },
    );
  let value: unknown;
  try {
    value = JSON.parse(stored);
  } catch {
    throw refuse("not JSON");
  }
  if (value === null || typeof value !== "object" || Array.isArray(value)) {
    throw refuse("not an object");
  }
  const fields = Object.keys(value).sort();
  if (fields.join(",") !== "format,minReaderFormat,writtenBy") {
    throw refuse("expected exactly format, minReaderFormat and writtenBy");
  }
  const { format, minReaderFormat, writtenBy } = value as Record<string, unknown>;
  const isFormat = (n: unknown): n is number => Number.isSafeInteger(n) && (n as number) >= 2;
  if (!isFormat(format) || !isFormat(minReaderFormat))
    throw refuse("a format is not an integer ≥ 2");
  if (minReaderFormat > format) throw refuse("minReaderFormat is above format");
  if (typeof writtenBy !== "string" || writtenBy.length === 0) throw refuse("writtenBy is empty");
  return { format, minReaderFormat, writtenBy };
}
