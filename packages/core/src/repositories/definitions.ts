/**
 * Definitions of models, workflows and vaults, each in its config
 * partition `config--{kind}--{name}`: the definition (`definition.json`)
 * and, beside it, what evaluating it produced (`evaluated-workflow.json`,
 * and for models `evaluated-definition.json`). Auto definitions live in
 * `definition--{id}`.
 *
 * - create refuses a name that exists (`document_exists`);
 * - edit replaces the definition; on format 3 it reads the replaced digest
 *   first (only then) and stages the edit with `expect: { sha256 }`, so an
 *   edit of a missing definition is `document_not_found` there;
 * - delete removes every key of the partition, one tombstone each;
 * - rename moves the definition across two partitions in order (rename-to
 *   with expect absent, then rename-from with expect present) and removes
 *   the old partition's evaluated outputs, which described the old name.
 */
import type { ConfigKind } from "../changes/intents.js";
import { configPartition } from "../changes/partitions.js";
import { stageTyped, typedStagingActive } from "../routing/route.js";
import { buildersOf, type ChangeBuilders, type RepositoryOptions } from "./builders.js";
import type { Datastore } from "./datastore/datastore.js";
import {
  autoDefinitionPath,
  configPath,
  DEFINITION_KEY,
  EVALUATED_DEFINITION_KEY,
  EVALUATED_WORKFLOW_KEY,
  splitDocumentPath,
} from "./layout.js";
import {
  contentBytes,
  deleteDocument,
  documentExists,
  documentNotFound,
  writeDocument,
} from "./write-through.js";

export class DefinitionRepository {
  readonly kind: ConfigKind;
  readonly #datastore: Datastore;
  readonly #builders: ChangeBuilders;

  constructor(datastore: Datastore, kind: ConfigKind, options: RepositoryOptions = {}) {
    this.kind = kind;
    this.#datastore = datastore;
    this.#builders = buildersOf(options);
  }

  async create(name: string, content: Uint8Array | string): Promise<void> {
    const path = configPath(this.kind, name, DEFINITION_KEY);
    const bytes = contentBytes(content);
    const hook = this.#datastore.hook;
    await this.#datastore.write(`${this.kind}-definitions.create`, async (w) => {
      if ((await w.digest(path)) !== undefined) throw documentExists(`${this.kind} ${name}`);
      await writeDocument(w, hook, path, bytes);
      await stageTyped(hook, () => this.#builders.definitionCreate(this.kind, name, bytes));
    });
  }

  async edit(name: string, content: Uint8Array | string): Promise<void> {
    const path = configPath(this.kind, name, DEFINITION_KEY);
    const bytes = contentBytes(content);
    const hook = this.#datastore.hook;
    await this.#datastore.write(`${this.kind}-definitions.edit`, async (w) => {
      let prior: string | undefined;
      if (typedStagingActive(hook)) {
        prior = await w.digest(path);
        if (prior === undefined) throw documentNotFound(`${this.kind} ${name}`);
      }
      await writeDocument(w, hook, path, bytes);
      await stageTyped(hook, () => this.#builders.definitionEdit(this.kind, name, bytes, prior!));
    });
  }

  async get(name: string): Promise<Uint8Array | undefined> {
    const path = configPath(this.kind, name, DEFINITION_KEY);
    return this.#datastore.read(`${this.kind}-definitions.get`, (r) => r.get(path));
  }

  /** Deletes the definition and its evaluated outputs; false when there was nothing. */
  async delete(name: string): Promise<boolean> {
    const hook = this.#datastore.hook;
    return this.#datastore.write(`${this.kind}-definitions.delete`, async (w) => {
      const paths = await w.list(configPartition(this.kind, name));
      for (const path of paths) await deleteDocument(w, hook, path);
      if (paths.length === 0) return false;
      const keys = paths.map((path) => splitDocumentPath(path).key);
      await stageTyped(hook, () => this.#builders.definitionDelete(this.kind, name, keys));
      return true;
    });
  }

  async rename(from: string, to: string): Promise<void> {
    const source = configPath(this.kind, from, DEFINITION_KEY);
    const target = configPath(this.kind, to, DEFINITION_KEY);
    const hook = this.#datastore.hook;
    await this.#datastore.write(`${this.kind}-definitions.rename`, async (w) => {
      const bytes = await w.get(source);
      if (bytes === undefined) throw documentNotFound(`${this.kind} ${from}`);
      if ((await w.digest(target)) !== undefined) throw documentExists(`${this.kind} ${to}`);
      const leftovers = (await w.list(configPartition(this.kind, from))).filter(
        (p) => p !== source,
      );
      await writeDocument(w, hook, target, bytes);
      await deleteDocument(w, hook, source);
      for (const path of leftovers) await deleteDocument(w, hook, path);
      const keys = leftovers.map((path) => splitDocumentPath(path).key);
      await stageTyped(hook, () =>
        this.#builders.definitionRename(this.kind, from, to, bytes, keys),
      );
    });
  }

  async saveEvaluatedWorkflow(name: string, content: Uint8Array | string): Promise<void> {
    const path = configPath(this.kind, name, EVALUATED_WORKFLOW_KEY);
    const bytes = contentBytes(content);
    const hook = this.#datastore.hook;
    await this.#datastore.write(`${this.kind}-evaluated-workflows.save`, async (w) => {
      const prior = typedStagingActive(hook) ? await w.digest(path) : undefined;
      await writeDocument(w, hook, path, bytes);
      await stageTyped(hook, () =>
        this.#builders.evaluatedWorkflowSave(this.kind, name, bytes, prior),
      );
    });
  }

  async deleteEvaluatedWorkflow(name: string): Promise<boolean> {
    const path = configPath(this.kind, name, EVALUATED_WORKFLOW_KEY);
    const hook = this.#datastore.hook;
    return this.#datastore.write(`${this.kind}-evaluated-workflows.delete`, async (w) => {
      if (!(await deleteDocument(w, hook, path))) return false;
      await stageTyped(hook, () => this.#builders.evaluatedWorkflowDelete(this.kind, name));
      return true;
    });
  }
}

/** What evaluating a model definition produced, beside it in the model's partition. */
export class EvaluatedDefinitionRepository {
  readonly #datastore: Datastore;
  readonly #builders: ChangeBuilders;

  constructor(datastore: Datastore, options: RepositoryOptions = {}) {
    this.#datastore = datastore;
    this.#builders = buildersOf(options);
  }

  async save(model: string, content: Uint8Array | string): Promise<void> {
    const path = configPath("model", model, EVALUATED_DEFINITION_KEY);
    const bytes = contentBytes(content);
    const hook = this.#datastore.hook;
    await this.#datastore.write("evaluated-definitions.save", async (w) => {
      const prior = typedStagingActive(hook) ? await w.digest(path) : undefined;
      await writeDocument(w, hook, path, bytes);
      await stageTyped(hook, () => this.#builders.evaluatedDefinitionSave(model, bytes, prior));
    });
  }

  async delete(model: string): Promise<boolean> {
    const path = configPath("model", model, EVALUATED_DEFINITION_KEY);
    const hook = this.#datastore.hook;
    return this.#datastore.write("evaluated-definitions.delete", async (w) => {
      if (!(await deleteDocument(w, hook, path))) return false;
      await stageTyped(hook, () => this.#builders.evaluatedDefinitionDelete(model));
      return true;
    });
  }
}

/** Definitions generated by the engine, each in its own `definition--{id}` partition. */
export class AutoDefinitionRepository {
  readonly #datastore: Datastore;
  readonly #builders: ChangeBuilders;

  constructor(datastore: Datastore, options: RepositoryOptions = {}) {
    this.#datastore = datastore;
    this.#builders = buildersOf(options);
  }

  async save(id: string, content: Uint8Array | string): Promise<void> {
    const path = autoDefinitionPath(id);
    const bytes = contentBytes(content);
    const hook = this.#datastore.hook;
    await this.#datastore.write("auto-definitions.save", async (w) => {
      const prior = typedStagingActive(hook) ? await w.digest(path) : undefined;
      await writeDocument(w, hook, path, bytes);
      await stageTyped(hook, () => this.#builders.autoDefinitionSave(id, bytes, prior));
    });
  }
}
