/**
 * The walk over every directory node some roots reach, each once: what
 * garbage collection marks and a fork copies.
 */
import { idKey } from "./id-key.js";
import type { DirectoryNode } from "./node.js";

/**
 * Every directory node `roots` reach, each stored node once: `load` reads it
 * the first time its id comes up, and `seen` (keyed by idKey) remembers it.
 * A directory held in its entry has no row — it is reached through its
 * parent, neither loaded nor remembered — but what it names is walked on.
 * The caller handles each node's files.
 */
export async function* reachedNodes(
  roots: readonly Uint8Array[],
  load: (id: Uint8Array) => Promise<DirectoryNode>,
  seen: Set<string>,
): AsyncGenerator<DirectoryNode> {
  const pending: (Uint8Array | DirectoryNode)[] = [...roots];
  while (pending.length > 0) {
    const next = pending.pop()!;
    let node = next as DirectoryNode;
    if (next instanceof Uint8Array) {
      const key = idKey(next);
      if (seen.has(key)) continue;
      seen.add(key);
      node = await load(next);
    }
    for (const item of node.items) if (item.kind !== "file") pending.push(item.node ?? item.target);
    yield node;
  }
}
