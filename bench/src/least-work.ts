/**
 * The work a fixed step of runledger's format cannot skip, done by hand with
 * the least code: what any implementation writing the same rows must compute
 * in JavaScript before its one statement, whatever its design.
 *
 * A fixed step writes the file `state/output.json` and its event. The v1
 * format (docs/file-format.md) makes the step's row hold: the file's SHA-256; the
 * node of the directory `state` (its one entry: the file's name, digest, size
 * and, held inline, its bytes) and that node's SHA-256; the root node (its one
 * entry: `state`, its digest and its node held inline) and its SHA-256; the
 * event's id and JSON text; and the event's digest, chained from the one
 * before. So the least a step does is three copies into new arrays, four
 * SHA-256s (Node's, as adapter-node hands core) and an id and a JSON text.
 *
 * The bytes built here have the layout's sizes, not its exact bytes: this is
 * a floor of the cost, bound to the replay of runledger's recorded
 * statements (`replay`'s `beforeWrite`), not a second implementation of the
 * format. Everything else core does on a step — the lease's queue, the
 * transaction's owner, the checks of what a caller hands in, the node
 * cache — is left out.
 */
import * as crypto from "node:crypto";
import { nodeCryptoHash } from "@runledger/core/port";

const { randomUUID } = crypto;
/** SHA-256 as adapter-node hands it to core: Node's one-shot hash, read into an array. */
const { sha256 } = nodeCryptoHash(crypto);

const NODE_DOMAIN = new TextEncoder().encode("runledger/node/1\0");
const EVENT_DOMAIN = new TextEncoder().encode("runledger journal event v1\0");
const FILE_NAME = new TextEncoder().encode("output.json");
const DIRECTORY_NAME = new TextEncoder().encode("state");

/** An entry's fixed part: its kind, its name's length, its digest and a two-byte size. */
const ENTRY = 1 + 1 + 32 + 2;

export interface LeastWork {
  /** One step's work on `content` (the file's bytes); `step` names the event. */
  step(content: Uint8Array, step: number): void;
}

export function leastWork(): LeastWork {
  const encoder = new TextEncoder();
  const scratch = new Uint8Array(4096);
  let previous: Uint8Array = new Uint8Array(32);
  return {
    step(content, step) {
      const fileId = sha256(content);
      const leaf = node(FILE_NAME, fileId, content);
      const leafId = sha256(leaf);
      const root = node(DIRECTORY_NAME, leafId, leaf);
      const rootId = sha256(root);
      const eventId = randomUUID();
      const text = JSON.stringify({ kind: "step.completed", step, status: "success" });
      let at = 0;
      scratch.set(EVENT_DOMAIN, at);
      at += EVENT_DOMAIN.length;
      scratch.set(previous, at);
      at += 32 + 8;
      at += encoder.encodeInto(eventId, scratch.subarray(at)).written;
      at += encoder.encodeInto(text, scratch.subarray(at)).written;
      scratch.set(rootId, at);
      at += 32 + 8;
      previous = sha256(scratch.subarray(0, at));
    },
  };
}

/** A node of one entry, whose content (a file's bytes, or a child node) it holds inline. */
function node(name: Uint8Array, target: Uint8Array, content: Uint8Array): Uint8Array {
  const bytes = new Uint8Array(NODE_DOMAIN.length + 2 + ENTRY + name.length + content.length);
  let at = NODE_DOMAIN.length + 2;
  bytes.set(NODE_DOMAIN, 0);
  bytes[at++] = 1;
  bytes[at++] = name.length;
  bytes.set(name, at);
  at += name.length;
  bytes.set(target, at);
  at += 32 + 2;
  bytes.set(content, at);
  return bytes;
}
