/**
 * How a checkpoint's channel values sit in its root. Everything is below
 * `channels/`: a value is the file `<channel>.<type>` holding its serialized
 * bytes, and a non-empty list (a messages channel) is the directory
 * `<channel>/` with one file per element, `<index>.<type>`. A child
 * checkpoint's root copies its parent's `channels/` by reference and puts
 * only what changed, so a list that grows by one element stores one file
 * and shares every other with its parent. Names are percent-encoded with
 * "." encoded too, so `<channel>.<type>` never equals another channel's
 * directory, and a name too long for a path segment becomes its digest.
 */
import { sha256 } from "./location.js";

export const CHANNELS = "channels";

/** What a checkpoint's record says about one stored channel. */
export type ChannelEntry =
  | { readonly file: string; readonly type: string }
  | { readonly dir: string; readonly list: number };

const SEGMENT_MAX = 200;

export function segment(name: string): string {
  const encoded = encodeURIComponent(name).replaceAll(".", "%2E");
  return encoded.length <= SEGMENT_MAX ? encoded : `%23${sha256(name)}`;
}

export function scalarFile(channel: string, type: string): string {
  return `${segment(channel)}.${segment(type)}`;
}

export function channelPath(entry: ChannelEntry): string {
  return `${CHANNELS}/${"file" in entry ? entry.file : entry.dir}`;
}

export function sameBytes(a: Uint8Array, b: Uint8Array): boolean {
  if (a.length !== b.length) return false;
  for (let i = 0; i < a.length; i++) if (a[i] !== b[i]) return false;
  return true;
}
