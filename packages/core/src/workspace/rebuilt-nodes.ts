/**
 * The nodes one reader has rebuilt from their delta chains, kept so that
 * the next chain it reads stops at the nearest of them.
 */
import { idKey } from "./id-key.js";

/**
 * Nodes already rebuilt by one reader, so that a chain is rebuilt from the
 * nearest of them instead of from its whole node (verify reads every delta
 * of a run, each usually onto the one before it). Holds at most `limit`
 * nodes, oldest out first. Rebuilding is a function of the rows alone, so a
 * node taken from here is what reading its rows again would give — its
 * depth is kept too, for the check that a chain always descends.
 */
export class RebuiltNodes {
  readonly #limit: number;
  readonly #nodes = new Map<string, { readonly bytes: Uint8Array; readonly depth: number }>();

  constructor(limit = 4096) {
    this.#limit = limit;
  }

  get(id: Uint8Array): { readonly bytes: Uint8Array; readonly depth: number } | undefined {
    return this.#nodes.get(idKey(id));
  }

  set(id: Uint8Array, bytes: Uint8Array, depth: number): void {
    this.#nodes.set(idKey(id), { bytes, depth });
    if (this.#nodes.size > this.#limit) {
      this.#nodes.delete(this.#nodes.keys().next().value as string);
    }
  }
}
