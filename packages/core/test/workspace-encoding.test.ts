/**
 * The workspace encoding descriptor (src/workspace/encoding.ts): built from
 * the live constants, complete, and covered by the run schema's digest. The
 * conformance suite's "other workspace encodings" family proves the other
 * half — a file written by a build with any one constant changed is refused.
 */
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { sha256Hex } from "../src/port/hash.js";
import { SCHEMA_V1, SCHEMA_V1_DIGEST } from "../src/run/schema-v1.js";
import { manifestDigest } from "../src/schema/manifest.js";
import { DELTA_FORMAT, MAX_CHAIN } from "../src/workspace/delta.js";
import { WORKSPACE_ENCODING_FIELDS, WORKSPACE_ENCODING_V1 } from "../src/workspace/encoding.js";
import { CHUNK_SIZE } from "../src/workspace/files.js";
import {
  CUT_ONE_IN,
  ENTRY_KINDS,
  INLINE_MAX,
  INLINE_NODE_MAX,
  MAX_NODE_ENTRIES,
  NODE_DOMAIN,
} from "../src/workspace/node.js";
import { EMPTY_ROOT_ID } from "../src/workspace/node-encoding.js";
import { OBJECT_KEY_PREFIX_BYTES } from "../src/workspace/object-key.js";
import { BYTES, CHUNK_LIST, DELTA } from "../src/workspace/object-rows.js";
import { SRC, sourceFiles } from "./source-files.js";

/** The descriptor read back as its fields. */
function fields(descriptor: string): Record<string, string> {
  return Object.fromEntries(
    descriptor.split(";").map((field) => {
      const at = field.indexOf("=");
      return [field.slice(0, at), field.slice(at + 1)];
    }),
  );
}

/**
 * Numeric constants of src/workspace that decide nothing about the stored
 * bytes, each with why: every other one must be in the descriptor.
 */
const NOT_LAYOUT: Record<string, string> = {
  MAX_PATH_BYTES: "a limit on what a caller may write; the bytes of a path that fits do not change",
  MAX_SEGMENT_BYTES: "likewise, per path segment",
  MAX_DEPTH: "likewise, for how deep a path may go",
};

describe("the workspace encoding", () => {
  it("is built from the live constants, each field from its own", () => {
    expect(fields(WORKSPACE_ENCODING_V1)).toEqual({
      hash: "sha256",
      node: NODE_DOMAIN,
      empty: EMPTY_ROOT_ID,
      cut: `1/${CUT_ONE_IN}`,
      "max-entries": String(MAX_NODE_ENTRIES),
      inline: String(INLINE_MAX),
      "inline-node": String(INLINE_NODE_MAX),
      kinds: Object.entries(ENTRY_KINDS)
        .map(([name, kind]) => `${name}:${kind}`)
        .join(","),
      rows: `bytes:${BYTES},chunks:${CHUNK_LIST},delta:${DELTA}`,
      chunk: String(CHUNK_SIZE),
      chain: String(MAX_CHAIN),
      delta: String(DELTA_FORMAT),
      "key-prefix": String(OBJECT_KEY_PREFIX_BYTES),
    });
    expect(WORKSPACE_ENCODING_V1).toBe(
      WORKSPACE_ENCODING_FIELDS.map(([key, value]) => `${key}=${value}`).join(";"),
    );
    // The empty root is the hash of the node header: domain, 0x00, level 0, no entries.
    expect(EMPTY_ROOT_ID).toBe(
      sha256Hex(new Uint8Array([...new TextEncoder().encode(NODE_DOMAIN), 0, 0, 0])),
    );
  });

  it("names every numeric constant of the workspace that decides its bytes", () => {
    const inDescriptor = new Set([
      "CUT_ONE_IN",
      "MAX_NODE_ENTRIES",
      "INLINE_MAX",
      "INLINE_NODE_MAX",
      "CHUNK_SIZE",
      "MAX_CHAIN",
      "DELTA_FORMAT",
      "OBJECT_KEY_PREFIX_BYTES",
      "BYTES",
      "CHUNK_LIST",
      "DELTA",
    ]);
    const source = readFileSync(join(SRC, "workspace", "encoding.ts"), "utf8");
    for (const name of inDescriptor) expect(source, name).toMatch(new RegExp(`\\b${name}\\b`));
    const found: string[] = [];
    for (const file of sourceFiles(join(SRC, "workspace"))) {
      const text = readFileSync(file, "utf8");
      for (const [, name] of text.matchAll(/^export const ([A-Z][A-Z0-9_]*) = [0-9(]/gm)) {
        found.push(name!);
      }
    }
    // A new constant is either in the descriptor or named above as not deciding the layout.
    expect(found.filter((name) => !inDescriptor.has(name) && !(name in NOT_LAYOUT))).toEqual([]);
    expect(found).toEqual(expect.arrayContaining([...inDescriptor, ...Object.keys(NOT_LAYOUT)]));
  });

  it("is recorded by the run schema and moves its digest", () => {
    expect(SCHEMA_V1.encoding).toBe(WORKSPACE_ENCODING_V1);
    expect(manifestDigest(SCHEMA_V1)).toBe(SCHEMA_V1_DIGEST);
    const other = WORKSPACE_ENCODING_V1.replace(`cut=1/${CUT_ONE_IN}`, `cut=1/${CUT_ONE_IN + 1}`);
    expect(other).not.toBe(WORKSPACE_ENCODING_V1);
    expect(manifestDigest({ ...SCHEMA_V1, encoding: other })).not.toBe(SCHEMA_V1_DIGEST);
    // Without its encoding the same objects hash to another digest: the digest covers it.
    const { encoding: _, ...plain } = SCHEMA_V1;
    expect(manifestDigest(plain)).not.toBe(SCHEMA_V1_DIGEST);
  });

  it("is text an SQL literal and a message can carry as it is", () => {
    expect(WORKSPACE_ENCODING_V1).toMatch(/^[a-z0-9=;:,/-]+$/);
    expect(WORKSPACE_ENCODING_V1.length).toBeLessThanOrEqual(1024);
  });
});
