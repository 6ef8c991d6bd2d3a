/**
 * Opening without creating, for every kind of database core stores (run,
 * commit log, read model, datastore): one place that turns the driver's
 * "cannot open" for a missing file — or a missing database on a server —
 * into `not_found`.
 */
import { isRunledgerError, RunledgerError } from "../port/errors.js";
import type { Lease } from "./lease.js";
import type { ConnectionProvider } from "./provider.js";
import type { OpenRequest } from "./provider-options.js";

/** What a driver's `cannot_open` names as missing when there is nothing at the location. */
const MISSING: ReadonlySet<string> = new Set(["file", "namespace"]);

/**
 * Opens through a provider, answering a missing file or server database
 * (`details.missing` "file" or "namespace") — when the caller did not ask to
 * create one — with `not_found` rather than the driver's `cannot_open`, so
 * every kind of database, on every adapter, says "nothing here" the same way.
 */
export async function openExisting<Create>(
  provider: ConnectionProvider<Create>,
  location: string,
  request: OpenRequest<Create>,
  what: string,
  createHint: string,
): Promise<Lease> {
  try {
    return await provider.open(location, request);
  } catch (error) {
    if (
      request.create === undefined &&
      isRunledgerError(error, "cannot_open") &&
      MISSING.has(error.details?.missing as string)
    ) {
      throw new RunledgerError(
        "not_found",
        `no ${what} at ${location}; pass ${createHint} to create one`,
        {
          cause: error,
        },
      );
    }
    throw error;
  }
}
