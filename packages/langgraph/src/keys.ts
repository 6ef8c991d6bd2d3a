/**
 * The journal keys a thread's run is indexed by. A checkpoint is the event
 * keyed `c:<ns>:<checkpoint_id>` and a pending write the event keyed
 * `w:<ns>:<checkpoint_id>:<task_id>:<idx>`, so a checkpoint is one keyed
 * read, the newest of a namespace one reverse read of its prefix, and the
 * writes of a checkpoint one prefix read. Each part is percent-encoded (so
 * a ":" in a namespace cannot make one prefix match another namespace), and
 * a part longer than PART_MAX becomes `#` + its SHA-256, which keeps every
 * key under the journal's 512-character limit and every prefix exact.
 */
import { sha256 } from "./location.js";

const PART_MAX = 120;

function part(value: string): string {
  const encoded = encodeURIComponent(value);
  return encoded.length <= PART_MAX ? encoded : `#${sha256(value)}`;
}

/** The prefix of every checkpoint key of one namespace, or of all namespaces. */
export function checkpointPrefix(ns?: string): string {
  return ns === undefined ? "c:" : `c:${part(ns)}:`;
}

export function checkpointKey(ns: string, checkpointId: string): string {
  return `${checkpointPrefix(ns)}${part(checkpointId)}`;
}

/** The prefix of every pending-write key of one checkpoint. */
export function writesPrefix(ns: string, checkpointId: string): string {
  return `w:${part(ns)}:${part(checkpointId)}:`;
}

export function writeKey(ns: string, checkpointId: string, taskId: string, idx: number): string {
  return `${writesPrefix(ns, checkpointId)}${part(taskId)}:${idx}`;
}
