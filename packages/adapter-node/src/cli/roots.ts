/**
 * How the commands name a root: its full id, a unique prefix of at least 8
 * hex digits (as `log` and `fork` print 12), or — where a command says so —
 * a journal sequence. A prefix is matched against the roots the journal
 * holds (its history); one that matches none is `root_not_found`, one that
 * matches several `root_ambiguous`.
 */
import { RunledgerError, type RunSnapshot } from "@runledger/core";

const PREFIX = /^[0-9a-f]{8,64}$/;

/** The full id of the root `text` names in `r`'s run. */
export async function resolveRoot(r: RunSnapshot, text: string): Promise<string> {
  const prefix = text.toLowerCase();
  if (!PREFIX.test(prefix)) {
    throw new RunledgerError(
      "usage",
      `a root is its id or a prefix of it of at least 8 hex digits; got ${JSON.stringify(text)}`,
    );
  }
  if (prefix.length === 64) return prefix;
  const found = new Set<string>();
  for await (const entry of r.workspace.history()) {
    if (entry.rootId.startsWith(prefix)) found.add(entry.rootId);
  }
  if (found.size === 0) {
    throw new RunledgerError(
      "root_not_found",
      `no root of this run's journal starts with ${prefix}; \`runledger log\` lists them`,
      { details: { prefix } },
    );
  }
  if (found.size > 1) {
    throw new RunledgerError(
      "root_ambiguous",
      `${found.size} roots start with ${prefix}; give more of the id`,
      { details: { prefix, roots: [...found].sort() } },
    );
  }
  return [...found][0]!;
}

/** A side of a diff: a journal sequence (digits only, below 8 of them) or a root. */
export async function resolvePoint(
  r: RunSnapshot,
  text: string,
): Promise<{ sequence: number } | { root: string }> {
  if (/^[0-9]{1,7}$/.test(text) && Number(text) >= 1) return { sequence: Number(text) };
  return { root: await resolveRoot(r, text) };
}
