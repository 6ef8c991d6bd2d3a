/**
 * Selecting every path that starts with a prefix, exactly, for any Unicode
 * text. SQLite compares TEXT with BINARY collation: by UTF-8 bytes, which is
 * code point order. So the paths starting with `prefix` are exactly those at
 * or above `prefix` and below its successor: the prefix with its last code
 * point replaced by the next one (a last code point U+10FFFF is dropped and
 * the one before it moved on instead). An upper bound of `prefix + "\uffff"`
 * would miss every path whose next character is U+FFFF itself or lies
 * outside the Basic Multilingual Plane (an emoji, say): both sort above it.
 * Both bounds are plain TEXT, so the primary-key index still serves the range.
 */

/**
 * The least string above every string that starts with `prefix`, in UTF-8
 * byte order; undefined when there is none (the empty prefix, or one made
 * only of U+10FFFF), and every path qualifies.
 */
export function prefixSuccessor(prefix: string): string | undefined {
  const points = Array.from(prefix);
  while (points.length > 0) {
    const last = (points.pop() as string).codePointAt(0) as number;
    if (last >= 0x10ffff) continue;
    // The surrogate range holds no characters: the next one after U+D7FF is U+E000.
    const next = last + 1 === 0xd800 ? 0xe000 : last + 1;
    return points.join("") + String.fromCodePoint(next);
  }
  return undefined;
}

/** A WHERE condition on `column` (and its parameters) for the paths starting with `prefix`. */
export function prefixCondition(
  column: string,
  prefix: string,
): { readonly sql: string; readonly params: string[] } {
  const upper = prefixSuccessor(prefix);
  return upper === undefined
    ? { sql: `${column} >= ?`, params: [prefix] }
    : { sql: `${column} >= ? AND ${column} < ?`, params: [prefix, upper] };
}
