/**
 * Ops: what a typed change does to the keys of its partition.
 *
 * - `put` stores bytes under a key. `sha256` is the lower-case hex SHA-256
 *   of the bytes; the content is stored once under it (content addressing),
 *   so a digest that does not match its bytes is refused.
 * - `tombstone` removes a key.
 *
 * Either may carry an expectation about the key's state just before the op
 * (after the earlier ops of the same partition in the same unit):
 * `"absent"`, `"present"`, or `{ sha256 }` — present with exactly that
 * content. A failed expectation refuses the op's whole partition.
 */
import { sha256Hex } from "../port/hash.js";
import { checkNames } from "../port/options.js";
import { isWellFormed, utf8 } from "../port/text.js";
import { invalidChange } from "./invalid.js";

export type Expectation = "absent" | "present" | { readonly sha256: string };

export interface PutOp {
  readonly op: "put";
  readonly key: string;
  readonly bytes: Uint8Array;
  readonly sha256: string;
  readonly expect?: Expectation;
}

export interface TombstoneOp {
  readonly op: "tombstone";
  readonly key: string;
  readonly expect?: Expectation;
}

export type ChangeOp = PutOp | TombstoneOp;

export const MAX_KEY_LENGTH = 4096;

const HEX_DIGEST = /^[0-9a-f]{64}$/;

/** A put of `content` (bytes, or text stored as UTF-8) under `key`, its digest computed. */
export function put(
  key: string,
  content: Uint8Array | string,
  options: { expect?: Expectation } = {},
): PutOp {
  checkNames(options, ["expect"], "put's options");
  const bytes = typeof content === "string" ? utf8(content) : content;
  const op: PutOp = { op: "put", key, bytes, sha256: sha256Hex(bytes) };
  return options.expect === undefined ? op : { ...op, expect: options.expect };
}

export function tombstone(key: string, options: { expect?: Expectation } = {}): TombstoneOp {
  checkNames(options, ["expect"], "tombstone's options");
  return options.expect === undefined
    ? { op: "tombstone", key }
    : { op: "tombstone", key, expect: options.expect };
}

/** Checks one op; `index` names it in the message. Hashes put contents to check their digest. */
export function checkOp(value: unknown, index: number): ChangeOp {
  const where = `ops[${index}]`;
  if (value === null || typeof value !== "object") {
    throw invalidChange("invalid_op", `${where} must be a put or tombstone op object`, { index });
  }
  const op = value as {
    op?: unknown;
    key?: unknown;
    bytes?: unknown;
    sha256?: unknown;
    expect?: unknown;
  };
  checkKey(op.key, where, index);
  if (op.expect !== undefined) checkExpectation(op.expect, where, index);
  if (op.op === "tombstone") return value as TombstoneOp;
  if (op.op !== "put") {
    throw invalidChange("invalid_op", `${where}.op must be "put" or "tombstone"`, { index });
  }
  if (!(op.bytes instanceof Uint8Array)) {
    throw invalidChange("invalid_op", `${where}.bytes must be a Uint8Array`, { index });
  }
  if (typeof op.sha256 !== "string" || !HEX_DIGEST.test(op.sha256)) {
    throw invalidChange("invalid_op", `${where}.sha256 must be 64 lower-case hex digits`, {
      index,
    });
  }
  if (sha256Hex(op.bytes) !== op.sha256) {
    throw invalidChange(
      "digest_mismatch",
      `${where}.sha256 is not the SHA-256 of its bytes; build puts with put(key, bytes)`,
      { index, key: op.key },
    );
  }
  return value as PutOp;
}

function checkKey(key: unknown, where: string, index: number): asserts key is string {
  if (typeof key !== "string" || key.length < 1 || key.length > MAX_KEY_LENGTH) {
    throw invalidChange(
      "invalid_key",
      `${where}.key must be a string of 1 to ${MAX_KEY_LENGTH} characters`,
      { index },
    );
  }
  if (!isWellFormed(key)) {
    throw invalidChange("invalid_key", `${where}.key holds a lone surrogate`, { index });
  }
}

function checkExpectation(expect: unknown, where: string, index: number): void {
  if (expect === "absent" || expect === "present") return;
  if (
    expect !== null &&
    typeof expect === "object" &&
    typeof (expect as { sha256?: unknown }).sha256 === "string" &&
    HEX_DIGEST.test((expect as { sha256: string }).sha256)
  ) {
    return;
  }
  throw invalidChange(
    "invalid_expectation",
    `${where}.expect must be "absent", "present" or { sha256: <64 lower-case hex digits> }`,
    { index },
  );
}
