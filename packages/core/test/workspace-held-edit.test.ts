/**
 * The held edit (workspace/held-edit.ts) builds a step's root without the
 * tree walk. It must never differ from the general edit (plan.ts, trees.ts):
 * wherever it answers, its root is the general edit's, byte for byte, and
 * the general edit would have written no row but the event for it either;
 * wherever the general edit refuses a plan, the held edit does not answer.
 * A differential test over random histories says so, and a few fixed shapes
 * pin which side of the line each case falls.
 */
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { toHex } from "../src/port/bytes.js";
import { portableHash } from "../src/port/hash.js";
import { utf8 } from "../src/port/text.js";
import { storeHeldFile } from "../src/workspace/files.js";
import { editHeld } from "../src/workspace/held-edit.js";
import {
  type DirectoryNode,
  INLINE_MAX,
  INLINE_NODE_MAX,
  type Item,
  isCut,
  MAX_NODE_ENTRIES,
} from "../src/workspace/node.js";
import { NodeCache } from "../src/workspace/node-cache.js";
import { EMPTY_NODE } from "../src/workspace/node-encoding.js";
import { NodeLoader } from "../src/workspace/node-loader.js";
import { applyPlan, type Edit, planEdits } from "../src/workspace/plan.js";
import { builtBelow } from "../src/workspace/trees.js";

const hash = portableHash;

/** Every node stays in the loader: the database is never asked. */
const noDatabase = {
  execute: () => Promise.reject(new Error("the database was asked for a node")),
};

/** A file's entry as an apply stores it: held when small, else named by its digest. */
function fileItem(name: string, bytes: Uint8Array): Item {
  const held = storeHeldFile(bytes, hash);
  if (held !== undefined) {
    return { name, kind: "file", target: held.digest, size: held.size, content: held.content! };
  }
  return { name, kind: "file", target: hash.sha256(bytes), size: bytes.length };
}

interface Step {
  readonly puts: readonly (readonly [string, number])[];
  readonly deletes: readonly string[];
}

function planOf(step: Step): Map<string, Edit> {
  const puts = step.puts.map(([path, size]): [string[], Item] => {
    const segments = path.split("/");
    return [segments, fileItem(segments.at(-1)!, new Uint8Array(size).fill(size % 251))];
  });
  return planEdits(
    puts,
    step.deletes.map((path) => path.split("/")),
  );
}

/** A plan of puts alone. */
const putting = (...puts: Step["puts"]): Map<string, Edit> => planOf({ puts, deletes: [] });

/** The root the general edit builds from the empty workspace with these files. */
function rootWith(loader: NodeLoader, puts: Step["puts"]): DirectoryNode {
  return applyPlan(loader, hash, EMPTY_NODE, planOf({ puts, deletes: [] }), []) as DirectoryNode;
}

/** The general edit's root for `plan` on `root`, or the code it refuses the plan with. */
function generalEdit(
  loader: NodeLoader,
  root: DirectoryNode,
  plan: Map<string, Edit>,
): DirectoryNode | string {
  try {
    const built = applyPlan(loader, hash, root, plan, []);
    if (built instanceof Promise) throw new Error("the general edit read a node");
    return built!;
  } catch (error) {
    return (error as { code?: string }).code ?? String(error);
  }
}

/** Paths within a few small directories, so that held ones are common and conflicts rare. */
const path = fc
  .tuple(
    fc.constantFrom("", "state/", "state/deep/", "logs/", "m/"),
    fc.constantFrom("a", "b", "output.json", "z", "deep"),
  )
  .map(([directory, name]) => directory + name);
/** Mostly held sizes; sometimes one a row must hold, or one that outgrows a held directory. */
const size = fc.oneof(
  { weight: 8, arbitrary: fc.integer({ min: 0, max: 120 }) },
  { weight: 1, arbitrary: fc.constant(INLINE_MAX) },
  { weight: 1, arbitrary: fc.integer({ min: INLINE_MAX + 1, max: INLINE_MAX + 40 }) },
);
const step: fc.Arbitrary<Step> = fc.record({
  puts: fc.uniqueArray(fc.tuple(path, size), { selector: ([p]) => p, maxLength: 3 }),
  deletes: fc.uniqueArray(path, { maxLength: 1 }),
});

describe("the held edit", () => {
  it("wherever it answers, builds the general edit's root byte for byte, one the event alone holds", () => {
    const seen = { held: 0, general: 0, refused: 0 };
    fc.assert(
      fc.property(fc.array(step, { minLength: 1, maxLength: 25 }), (steps) => {
        // As a store does: each apply has its loader; the cache keeps what each one built.
        const cache = new NodeCache();
        let root = EMPTY_NODE;
        for (const s of steps) {
          const loader = new NodeLoader(noDatabase, cache);
          let plan: Map<string, Edit>;
          try {
            plan = planOf(s);
          } catch {
            continue; // a conflict within the step: refused before any edit
          }
          const held = editHeld(hash, root, plan);
          const general = generalEdit(loader, root, plan);
          if (typeof general === "string") {
            expect(held, `refused by the general edit (${general})`).toBeUndefined();
            seen.refused++;
            continue;
          }
          if (held === undefined) {
            seen.general++;
          } else {
            seen.held++;
            expect(toHex(held.id)).toBe(toHex(general.id));
            expect(held.bytes).toStrictEqual(general.bytes);
            // The general edit writes no row for it either: one top, held by its event.
            expect(builtBelow(loader, general)).toStrictEqual([general]);
            expect(general.bytes!.length).toBeLessThanOrEqual(INLINE_NODE_MAX);
          }
          cache.replace(builtBelow(loader, general));
          root = general;
        }
      }),
      { numRuns: 300 },
    );
    // Each side of the line was reached, so the comparison above was made.
    expect(seen.held).toBeGreaterThan(100);
    expect(seen.general).toBeGreaterThan(10);
    expect(seen.refused).toBeGreaterThan(10);
  });

  it("answers a step's shape: a small file replaced in a small directory of a small root", () => {
    const loader = new NodeLoader(noDatabase, new NodeCache());
    const first = rootWith(loader, [
      ["state/output.json", 40],
      ["notes", 9],
    ]);
    const plan = putting(["state/output.json", 41]);
    const held = editHeld(hash, first, plan);
    expect(held).toBeDefined();
    expect(toHex(held!.id)).toBe(
      toHex((applyPlan(loader, hash, first, plan, []) as DirectoryNode).id),
    );
  });

  it("does not answer where the general edit writes a row or splits a leaf", () => {
    const root = rootWith(new NodeLoader(noDatabase, new NodeCache()), [["state/output.json", 40]]);
    // A file too large to hold: its digest names a row.
    expect(editHeld(hash, root, putting(["state/output.json", INLINE_MAX + 1]))).toBeUndefined();
    // A directory that outgrows its entry: its node becomes a row.
    const crowded = putting(["state/a", 200], ["state/b", 200], ["state/c", 200]);
    expect(editHeld(hash, root, crowded)).toBeUndefined();
    // A name the cut rule ends a leaf after, followed by another: two leaves.
    const cut = Array.from({ length: 2000 }, (_, i) => `n${i}`).find((name) => isCut(0, name))!;
    expect(editHeld(hash, root, putting([cut, 1], [`${cut}~`, 1]))).toBeUndefined();
    // More entries than a node holds.
    const many = Array.from({ length: MAX_NODE_ENTRIES + 1 }, (_, i): [string, number] => [
      `f${i}`,
      0,
    ]);
    expect(editHeld(hash, root, putting(...many))).toBeUndefined();
    // A delete of nothing, and a file over a directory: the general edit's refusals.
    expect(editHeld(hash, root, planOf({ puts: [], deletes: ["nothing"] }))).toBeUndefined();
    expect(editHeld(hash, root, putting(["state", 1]))).toBeUndefined();
    // No change at all, and the root emptied: the general edit names those roots rather than holding them.
    expect(editHeld(hash, root, planOf({ puts: [], deletes: [] }))).toBeUndefined();
    expect(
      editHeld(hash, root, planOf({ puts: [], deletes: ["state/output.json"] })),
    ).toBeUndefined();
  });

  it("stores a held file from bytes or text of at most INLINE_MAX bytes, and nothing larger", () => {
    expect(storeHeldFile(new Uint8Array(INLINE_MAX), hash)?.size).toBe(INLINE_MAX);
    expect(storeHeldFile(new Uint8Array(INLINE_MAX + 1), hash)).toBeUndefined();
    expect(storeHeldFile("é".repeat(INLINE_MAX / 2), hash)?.content).toStrictEqual(
      utf8("é".repeat(INLINE_MAX / 2)),
    );
    // Few characters, too many bytes.
    expect(storeHeldFile("é".repeat(INLINE_MAX / 2 + 1), hash)).toBeUndefined();
    expect(storeHeldFile([new Uint8Array(1)], hash)).toBeUndefined();
  });
});
