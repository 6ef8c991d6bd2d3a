/**
 * The route: how a repository's write reaches sync (route 1) and the commit
 * log (route 2).
 *
 * - `signalChange(hook, change, { typed })`: the route-1 signal. A typed
 *   write (`typed: true`) skips it only while a typed stager is bound to the
 *   hook — then the typed change replaces it; otherwise it is always recorded.
 * - `stageTyped(hook, build)`: called after the write. It looks up the unit
 *   bound to the hook — one lookup. With none, a format-2 hook returns at
 *   once and `build` never runs; a format-3 hook refuses
 *   (`unscoped_write_refused`), so no v3 write can escape the log. With one,
 *   it runs `build` and stages the result as one batch: every change is
 *   checked before the first is staged, so a bad change stages nothing.
 * - `typedStagingActive(hook)`: whether a stager is bound; it gates the
 *   reads a typed change needs before the write destroys them, so format 2
 *   reads nothing extra.
 * - `bindUnit(hook, stager)`: explicit binding; returns the unbind. A hook
 *   takes one stager at a time, and a format-2 hook takes none. Binding also
 *   attaches the hook's reconciler to the stager (when both have one), and
 *   unbinding leaves it attached: the unit is decided after the run, and
 *   then puts back the documents whose staged change did not land.
 * - `withStagingScope(hook, write)`: what a hook's owner (the datastore)
 *   wraps each write transaction in. With a stager bound that can open a
 *   scope (a CommitUnit can), the write's staging is provisional: the scope
 *   is confirmed only when `write` returned — its COMMIT succeeded — and
 *   discarded when it threw (a rollback, or a failed COMMIT), so a unit
 *   never keeps a change for a document that was never written. With no
 *   stager bound it is one lookup and nothing else (format 2 pays nothing).
 */
import type { TypedChange } from "../changes/change.js";
import { checkChange } from "../changes/change.js";
import type { DocumentReconciler, StagingScope } from "../commit-log/types.js";
import { RunledgerError } from "../port/errors.js";
import type { ChangeHook, PathChange } from "./hook.js";

/** What the route stages into: a commit-log unit (CommitUnit fits), or a wrapper of one. */
export interface TypedStager {
  /** Stages the changes in order, all or none. */
  stage(changes: TypedChange | readonly TypedChange[]): Promise<void>;
  /**
   * Opens a provisional scope (waiting for the previous one to end), which
   * `withStagingScope` confirms when the write committed and discards when
   * it did not. A stager without it is staged into directly, and keeps what
   * a rolled-back write staged.
   */
  openScope?(): Promise<StagingScope>;
  /**
   * Takes the reconciler of a hook it is bound to (CommitUnit does): when the
   * unit is decided, documents whose staged change did not land are put back
   * to what the log holds. A stager without it reconciles nothing.
   */
  attachReconciler?(reconciler: DocumentReconciler): void;
}

/** What a builder returns: the typed changes of one write, in staging order. */
export type BuiltChanges = TypedChange | readonly TypedChange[];

const bound = new WeakMap<ChangeHook, TypedStager>();
/** The scope of the write in progress on a hook, and the stager it belongs to. */
const scopes = new WeakMap<ChangeHook, { stager: TypedStager; scope: StagingScope }>();

export function bindUnit(hook: ChangeHook, stager: TypedStager): () => void {
  if (hook.format !== 3) {
    throw new RunledgerError(
      "unit_binding_refused",
      "cannot bind a commit-log unit to a format-2 datastore's hook: format 2 stages no " +
        "typed changes; opt a new, empty datastore into format 3 first",
      { details: { format: hook.format } },
    );
  }
  if (bound.has(hook)) {
    throw new RunledgerError(
      "unit_binding_refused",
      "this hook already has a unit bound; unbind it (or finish its run) before binding another",
    );
  }
  bound.set(hook, stager);
  if (hook.reconciler !== undefined) stager.attachReconciler?.(hook.reconciler);
  let unbound = false;
  return () => {
    if (unbound) return;
    unbound = true;
    if (bound.get(hook) === stager) bound.delete(hook);
  };
}

export function typedStagingActive(hook: ChangeHook): boolean {
  return bound.has(hook);
}

export async function signalChange(
  hook: ChangeHook,
  change: PathChange,
  options: { readonly typed?: boolean } = {},
): Promise<void> {
  if (options.typed === true && bound.has(hook)) return;
  hook.observer?.record({
    route: "signal",
    caller: hook.caller,
    kind: change.kind,
    key: change.path,
  });
  await hook.signal(change);
}

export async function stageTyped(hook: ChangeHook, build: () => BuiltChanges): Promise<void> {
  const stager = bound.get(hook);
  if (stager === undefined) {
    if (hook.format === 3) {
      throw new RunledgerError(
        "unscoped_write_refused",
        `${hook.caller} wrote to a format-3 datastore with no commit-log unit bound to its ` +
          "hook; bind one (bindUnit, or withRunUnit) around the write. Nothing was written",
        { details: { caller: hook.caller } },
      );
    }
    hook.observer?.record({ route: "stage", caller: hook.caller, kind: "skipped" });
    return;
  }
  const built = build();
  const changes = (Array.isArray(built) ? built : [built]).map((change) => checkChange(change));
  for (const change of changes) {
    for (const op of change.ops) {
      hook.observer?.record({
        route: "stage",
        caller: hook.caller,
        kind: change.intent,
        key: `${change.partition}/${op.key}`,
        op: op.op,
      });
    }
  }
  if (changes.length === 0) return;
  const scoped = scopes.get(hook);
  await (scoped !== undefined && scoped.stager === stager ? scoped.scope : stager).stage(changes);
}

/**
 * Runs one write transaction of the hook's datastore (`write` resolves only
 * after its COMMIT succeeded) so that what it stages survives only if it
 * committed: the bound stager's scope is confirmed after `write` returns and
 * discarded when it throws, then the error is rethrown. (A discard that
 * fails leaves the unit unable to commit; the write's own error is the one
 * thrown.)
 */
export async function withStagingScope<T>(hook: ChangeHook, write: () => Promise<T>): Promise<T> {
  const stager = bound.get(hook);
  if (stager?.openScope === undefined) return write();
  const scope = await stager.openScope();
  scopes.set(hook, { stager, scope });
  let result: T;
  try {
    result = await write();
  } catch (error) {
    if (scopes.get(hook)?.scope === scope) scopes.delete(hook);
    await scope.discard().catch(() => undefined);
    throw error;
  }
  if (scopes.get(hook)?.scope === scope) scopes.delete(hook);
  await scope.confirm();
  return result;
}
