/**
 * Vault configs: definitions of kind "vault" (config--vault--{name}),
 * written through the definition repository, so they get its intents, its
 * `expect: { sha256 }` edits and its two-partition rename.
 *
 * Secrets never reach the datastore: their values go to the VaultProvider,
 * and the document names only which secrets the vault holds. So no
 * document, typed change, commit or chunk carries a secret value.
 * Ordering keeps every document's secrets available: values are stored
 * before the document that names them, and removed only after it is gone.
 *
 * No absolute path either: a vault's directory settings are stored
 * relative to the datastore's root (./vault-paths.ts), and one that leaves
 * the root is refused before any secret is stored or anything is written.
 */
import type { JsonObject } from "../port/json.js";
import type { RepositoryOptions } from "./builders.js";
import type { Datastore } from "./datastore/datastore.js";
import { DefinitionRepository } from "./definitions.js";
import { storedVaultSettings } from "./vault-paths.js";
import { documentNotFound } from "./write-through.js";

/** Where secret values live; the datastore never sees them. */
export interface VaultProvider {
  store(vault: string, secret: string, value: string): Promise<void>;
  read(vault: string, secret: string): Promise<string | undefined>;
  remove(vault: string, secret: string): Promise<void>;
}

export interface VaultConfig {
  /** The vault's type, e.g. "local_encryption". */
  readonly type: string;
  /** Settings that are not secret; directories relative to the datastore's root, or absolute inside it. */
  readonly settings: JsonObject;
  /** Secret values by name: handed to the provider, never stored. */
  readonly secrets?: Readonly<Record<string, string>>;
}

/** A vault config as stored: the secrets by name only. */
export interface StoredVaultConfig {
  readonly type: string;
  /** As given, but every directory setting relative to the datastore's root. */
  readonly settings: JsonObject;
  readonly secrets: readonly string[];
}

export class VaultConfigRepository {
  readonly #datastore: Datastore;
  readonly #definitions: DefinitionRepository;
  readonly #provider: VaultProvider;

  constructor(datastore: Datastore, provider: VaultProvider, options: RepositoryOptions = {}) {
    this.#datastore = datastore;
    this.#definitions = new DefinitionRepository(datastore, "vault", options);
    this.#provider = provider;
  }

  /**
   * Creates the vault config, or edits it when it exists. Its directory
   * settings are stored relative to the datastore's root; one outside the
   * root is `vault_path_outside_root`, refused before anything is stored.
   */
  async save(name: string, config: VaultConfig): Promise<void> {
    const settings = storedVaultSettings(name, config.type, config.settings, this.#datastore.root);
    const secrets = Object.entries(config.secrets ?? {}).sort(([a], [b]) => (a < b ? -1 : 1));
    for (const [secret, value] of secrets) await this.#provider.store(name, secret, value);
    const before = await this.get(name);
    const stored: StoredVaultConfig = {
      type: config.type,
      settings,
      secrets: secrets.map(([secret]) => secret),
    };
    const text = JSON.stringify(stored);
    if (before === undefined) await this.#definitions.create(name, text);
    else await this.#definitions.edit(name, text);
    for (const secret of before?.secrets ?? []) {
      if (!stored.secrets.includes(secret)) await this.#provider.remove(name, secret);
    }
  }

  async get(name: string): Promise<StoredVaultConfig | undefined> {
    const bytes = await this.#definitions.get(name);
    return bytes === undefined
      ? undefined
      : (JSON.parse(new TextDecoder().decode(bytes)) as StoredVaultConfig);
  }

  /** Renames the vault: its secrets are copied to the new name first, removed from the old last. */
  async rename(from: string, to: string): Promise<void> {
    const stored = await this.get(from);
    if (stored === undefined) throw documentNotFound(`vault ${from}`);
    for (const secret of stored.secrets) {
      const value = await this.#provider.read(from, secret);
      if (value !== undefined) await this.#provider.store(to, secret, value);
    }
    await this.#definitions.rename(from, to);
    for (const secret of stored.secrets) await this.#provider.remove(from, secret);
  }

  async delete(name: string): Promise<boolean> {
    const stored = await this.get(name);
    const deleted = await this.#definitions.delete(name);
    for (const secret of stored?.secrets ?? []) await this.#provider.remove(name, secret);
    return deleted;
  }
}
