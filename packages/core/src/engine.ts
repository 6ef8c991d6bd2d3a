/**
 * `@runledger/core/engine`: the machinery under the run API, for authors of
 * tools, test suites and new database formats. The connection provider (one
 * entry per canonical location, leases, an establish hook), the scopes a
 * transaction or snapshot callback receives, schema manifests (serialize,
 * digest, read a file's live schema, compare), and the workspace format's
 * constants. An application needs none of it: `RunStore` composes it.
 *
 * @example
 * ```ts
 * import { nodeDriver } from "@runledger/adapter-node";
 * import { ConnectionProvider, readLiveSchema } from "@runledger/core/engine";
 *
 * // A provider with no schema of its own: its establish hook only configures WAL.
 * const provider = new ConnectionProvider({ driver: nodeDriver() });
 * const lease = await provider.open("scratch.db", { create: true });
 * await lease.transact(async (tx) => {
 *   await tx.execute("CREATE TABLE note (body TEXT NOT NULL)");
 *   await tx.savepoint((inner) => inner.execute("INSERT INTO note VALUES (?)", ["kept"]));
 * });
 * const live = await lease.read((r) => readLiveSchema(r));
 * console.log(live.objects.map((object) => object.name)); // ["note"]
 * await lease.release();
 * await provider.close();
 * ```
 *
 * @module
 */

// Connections: the provider, its leases, the scopes callbacks receive.

export type { Lease } from "./connection/lease.js";
export { ConnectionProvider } from "./connection/provider.js";
export type {
  ConnectionProviderOptions,
  EntrySummary,
  Establish,
  EstablishContext,
  OpenRequest,
} from "./connection/provider-options.js";
export type { ReadScope, WriteScope } from "./transaction/scope.js";

// Formats: the run and workspace constants, schema manifests.

export {
  manifestDigest,
  type SchemaManifest,
  type SchemaObject,
  serializeSchema,
} from "./schema/manifest.js";
export {
  compareObjects,
  type LiveSchema,
  readLiveSchema,
  type SchemaDifference,
} from "./schema/recognize.js";
export { WORKSPACE_ENCODING_V1 } from "./workspace/encoding.js";
export { CHUNK_SIZE } from "./workspace/files.js";
export { CUT_ONE_IN, MAX_NODE_ENTRIES } from "./workspace/node.js";
