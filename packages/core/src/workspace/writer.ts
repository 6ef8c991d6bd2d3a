/**
 * The workspace a run transaction writes: everything a snapshot reads, and
 * apply, pins, prune and garbage collection. Each call that answers a
 * promise is an operation of the transaction's scope: the callback must
 * await it.
 */
import type { InjectedContext } from "../port/context.js";
import { RunledgerError } from "../port/errors.js";
import { checkNames } from "../port/options.js";
import type { WriteScope } from "../transaction/scope.js";
import { type ApplyChanges, type ApplyOptions, applyChanges } from "./apply.js";
import type { WorkspaceContext } from "./context.js";
import { collectGarbage, type GarbageReport } from "./gc.js";
import { INLINE_NODE_MAX } from "./node.js";
import { nodeBytes } from "./node-encoding.js";
import { BYTES, insertObjects } from "./object-rows.js";
import { removePin, setPin } from "./pins.js";
import { AT_ROOT, type AtRoot, WorkspaceReader } from "./reader.js";
import type { ApplyResult, RootJournal } from "./root-journal.js";

/**
 * Workspace changes, published atomically: new content is stored, the
 * changed directories rewritten, one new root recorded, the current-root
 * pointer moved and a journal event appended naming it — all in the caller's
 * transaction, inside a savepoint (opened before the first of several
 * writes) so that a failure anywhere leaves the previous root current and no
 * row behind.
 */
export class WorkspaceWriter extends WorkspaceReader {
  readonly #scope: WriteScope;
  readonly #context: InjectedContext;
  readonly #journal: RootJournal;

  /** @internal A run transaction makes its workspace writer, handing in the run's journal. */
  constructor(
    scope: WriteScope,
    context: InjectedContext,
    workspace: WorkspaceContext,
    journal: RootJournal,
  ) {
    super(scope, workspace);
    this.#scope = scope;
    this.#context = context;
    this.#journal = journal;
  }

  apply(changes: ApplyChanges, options: ApplyOptions = {}): Promise<ApplyResult> {
    return this.#scope.track(
      applyChanges(this.#scope, this.workspace, this.#journal, changes, options),
    );
  }

  /** Keeps a root (default: the current one) from garbage collection under a name. */
  pin(name: string, options: AtRoot = {}): Promise<void> {
    return this.#scope.track(this.#pin(name, options));
  }

  async #pin(name: string, options: AtRoot): Promise<void> {
    checkNames(options, AT_ROOT, "pin's options");
    if (typeof name !== "string" || name.length < 1 || name.length > 256) {
      throw new RunledgerError("invalid_argument", "a pin name is a string of 1 to 256 characters");
    }
    const top = await this.rootNode(this.loader(), options.root);
    const root = top.id;
    // A pinned root outlives the events that name it (prune): it is a row of its own.
    const bytes = top.bytes ?? nodeBytes(top.level, top.items).bytes;
    if (bytes.length <= INLINE_NODE_MAX) {
      await insertObjects(this.executor, [
        { id: root, kind: BYTES, size: bytes.length, data: bytes },
      ]);
    }
    await setPin(this.executor, name, root, this.#context.clock());
  }

  /** Drops journal events before `before`; run `collectGarbage` afterwards to free what they retained. */
  prune(options: { before: number }): Promise<number> {
    return this.#scope.track(this.#prune(options));
  }

  async #prune(options: { before: number }): Promise<number> {
    checkNames(options, ["before"], "prune's options");
    return this.#journal.prune(this.#scope, options.before);
  }

  /** Deletes every node, file and piece that no event, pin or the current root reaches. */
  collectGarbage(): Promise<GarbageReport> {
    return this.#scope.track(collectGarbage(this.executor, this.workspace));
  }

  unpin(name: string): Promise<boolean> {
    return this.#scope.track(removePin(this.executor, name));
  }
}
