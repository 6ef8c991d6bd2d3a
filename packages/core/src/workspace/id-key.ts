/**
 * Ids as Map keys: every set and map of ids in the workspace (the node
 * cache, a walk's marks, a copy's seen set) keys them by idKey.
 */
import { toHex } from "../port/bytes.js";

/**
 * A compact Map key for an id: a 32-byte id (every id keyed: node ids, file
 * digests, piece addresses) as 16 UTF-16 code units, two bytes each, built
 * without an intermediate array. Any other length is keyed by "#" and its hex
 * form, an odd length, so it can never equal a 32-byte id's key.
 */
export function idKey(id: Uint8Array): string {
  if (id.length !== 32) return `#${toHex(id)}`;
  return String.fromCharCode(
    (id[0]! << 8) | id[1]!,
    (id[2]! << 8) | id[3]!,
    (id[4]! << 8) | id[5]!,
    (id[6]! << 8) | id[7]!,
    (id[8]! << 8) | id[9]!,
    (id[10]! << 8) | id[11]!,
    (id[12]! << 8) | id[13]!,
    (id[14]! << 8) | id[15]!,
    (id[16]! << 8) | id[17]!,
    (id[18]! << 8) | id[19]!,
    (id[20]! << 8) | id[21]!,
    (id[22]! << 8) | id[23]!,
    (id[24]! << 8) | id[25]!,
    (id[26]! << 8) | id[27]!,
    (id[28]! << 8) | id[29]!,
    (id[30]! << 8) | id[31]!,
  );
}
