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
 *   takes one stager at a time, and a format-2 hook takes none.
 */
import type { TypedChange } from "../changes/change.js";
import { checkChange } from "../changes/change.js";
import { RunledgerError } from "../port/errors.js";
import type { ChangeHook, PathChange } from "./hook.js";

/** What the route stages into: a commit-log unit (CommitUnit fits), or a wrapper of one. */
export interface TypedStager {
  /** Stages the changes in order, all or none. */
  stage(changes: TypedChange | readonly TypedChange[]): Promise<void>;
}

/** What a builder returns: the typed changes of one write, in staging order. */
export type BuiltChanges = TypedChange | readonly TypedChange[];

const bound = new WeakMap<ChangeHook, TypedStager>();

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
  if (changes.length > 0) await stager.stage(changes);
}
