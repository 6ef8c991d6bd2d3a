/**
 * Text that crosses into SQLite, and its UTF-8. SQLite stores TEXT as UTF-8,
 * and a lone UTF-16 surrogate has no UTF-8 form: a driver would store U+FFFD
 * in its place, so a key or a path written with one would never be found
 * again by the same string. Every place that takes text a database will
 * store or compare (keys, partitions, paths) refuses it with the one check
 * here; and every place that measures or hashes text encodes it here.
 */

const encoder = new TextEncoder();

/** A text's UTF-8 bytes. */
export function utf8(text: string): Uint8Array {
  return encoder.encode(text);
}

/** True when every character is ASCII: the text's UTF-8 bytes are then its code units. */
export function isAscii(text: string): boolean {
  for (let i = 0; i < text.length; i++) if (text.charCodeAt(i) > 0x7f) return false;
  return true;
}

/** Text that SQLite stores as UTF-8 exactly: no lone surrogate (which would turn into U+FFFD). */
export function isWellFormed(text: string): boolean {
  for (let i = 0; i < text.length; i++) {
    const unit = text.charCodeAt(i);
    if (unit >= 0xd800 && unit <= 0xdbff) {
      const next = text.charCodeAt(i + 1);
      if (!(next >= 0xdc00 && next <= 0xdfff)) return false;
      i++;
    } else if (unit >= 0xdc00 && unit <= 0xdfff) {
      return false;
    }
  }
  return true;
}
