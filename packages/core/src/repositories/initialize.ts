/**
 * Initialising a datastore: it gets its default vault config — a local
 * encryption vault named DEFAULT_VAULT_NAME, its base directory relative to
 * the datastore's root — written through the vault repository like any
 * other vault config. `DatastoreStore.open(location, { initialize })` runs it
 * (docs/routing.md, "Initialising a datastore").
 *
 * - Format 2: the repository writes the document and its route-1 signal,
 *   as every format-2 write does; no builder runs.
 * - Format 3: the write is staged into a unit of the given commit log and
 *   committed — a `definition.create` commit in `config--vault--default` —
 *   so the log, and any read model caught up from it, hold what the
 *   datastore holds. The log decides whether it is there: a config the log
 *   holds is not written again (the document is put back to the log's
 *   version if it differs), and a document the log never received (its
 *   unit never committed) is put back to the log's state and written again.
 * - Idempotent: once the config is there, initialising again reads and
 *   writes nothing more — one read (format 2), one log read and one read
 *   (format 3). A second opener that wrote it first is no failure.
 * - No secret: the default config names none, and initialising has no
 *   vault provider to hand one to.
 *
 * It is a step the caller asks for, not part of every creation: a format-3
 * write needs a commit log the datastore does not have, and a datastore may
 * opt into format 3 only while it is empty.
 */
import { configPartition } from "../changes/partitions.js";
import type { CommitLog } from "../commit-log/log.js";
import { isRunledgerError, RunledgerError } from "../port/errors.js";
import { checkNames } from "../port/options.js";
import { bindUnit } from "../routing/route.js";
import type { RepositoryOptions } from "./builders.js";
import type { Datastore } from "./datastore/datastore.js";
import { DefinitionRepository } from "./definitions.js";
import { DEFINITION_KEY } from "./layout.js";
import { type VaultConfig, VaultConfigRepository, type VaultProvider } from "./vault-config.js";

/** The name of the vault every initialised datastore has. */
export const DEFAULT_VAULT_NAME = "default";

/** The default vault: local encryption, its keys under `vault/` in the datastore's root. */
export const DEFAULT_VAULT_CONFIG: VaultConfig = Object.freeze({
  type: "local_encryption",
  settings: Object.freeze({ baseDir: "vault" }),
});

/** What initialising needs (`DatastoreOpenOptions.initialize`); `builders` as for any repository. */
export interface DatastoreInitialize extends RepositoryOptions {
  /** Format 3: the commit log the default vault config is committed to (required). Format 2: unused. */
  readonly log?: CommitLog;
}

/** The default config holds no secret, so nothing may reach a provider. */
const NO_SECRETS: VaultProvider = {
  store: () => Promise.reject(noProvider()),
  read: () => Promise.reject(noProvider()),
  remove: () => Promise.reject(noProvider()),
};

function noProvider(): RunledgerError {
  return new RunledgerError(
    "invalid_state",
    "initialising a datastore has no vault provider: the default vault config names no secret",
  );
}

/** Refuses, before anything is written, a format-3 initialisation with no commit log. */
export function checkInitialize(format: 2 | 3, options: DatastoreInitialize, location: string) {
  checkNames(options, ["log", "builders"], "initialize's options");
  if (format === 3 && options.log === undefined) {
    throw new RunledgerError(
      "invalid_argument",
      `initialising the format-3 datastore at ${location} commits its default vault config ` +
        "to a commit log; pass initialize: { log }. Nothing was written",
      { details: { format } },
    );
  }
}

export async function initializeDatastore(
  datastore: Datastore,
  options: DatastoreInitialize,
): Promise<void> {
  checkInitialize(datastore.format, options, datastore.location);
  // The repository takes only its own option; `log` is initialisation's.
  const repository = options.builders === undefined ? {} : { builders: options.builders };
  const vaults = new VaultConfigRepository(datastore, NO_SECRETS, repository);
  const log = options.log;
  if (datastore.format === 2 || log === undefined) {
    if ((await vaults.get(DEFAULT_VAULT_NAME)) === undefined) await createDefault(vaults);
    return;
  }
  const partition = configPartition("vault", DEFAULT_VAULT_NAME);
  const keys = [{ partition, key: DEFINITION_KEY }];
  const landed = await log.read((reader) => reader.landed(partition, DEFINITION_KEY));
  const document = await new DefinitionRepository(datastore, "vault").get(DEFAULT_VAULT_NAME);
  if (landed.state === "present") {
    if (document === undefined || !sameBytes(document, landed.bytes)) {
      await datastore.reconcile(log, keys);
    }
    return;
  }
  // A document the log does not hold is ahead of it: put it back to the log's state first.
  if (document !== undefined) await datastore.reconcile(log, keys);
  const unit = await log.begin();
  const unbind = bindUnit(datastore.hook, unit);
  try {
    await createDefault(vaults);
  } catch (error) {
    unbind();
    await unit.abandon();
    throw error;
  }
  unbind();
  // Refused only when another unit landed the config meanwhile: the document is then the log's.
  await unit.commit();
}

/** Writes the default config; another opener that wrote it first is no failure. */
async function createDefault(vaults: VaultConfigRepository): Promise<void> {
  try {
    await vaults.save(DEFAULT_VAULT_NAME, DEFAULT_VAULT_CONFIG);
  } catch (error) {
    if (!isRunledgerError(error, "document_exists")) throw error;
  }
}

function sameBytes(a: Uint8Array, b: Uint8Array | undefined): boolean {
  return b !== undefined && a.length === b.length && a.every((byte, i) => byte === b[i]);
}
