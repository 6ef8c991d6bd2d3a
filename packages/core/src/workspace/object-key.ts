/**
 * How an object is found by its id. `workspace_object` has no unique index
 * on the 32-byte id: its key index (`workspace_object_by_id`) holds only the
 * id's first 8 bytes, so a step's random ids dirty fewer, fuller index pages.
 * A SHA-256's first 8 bytes are as uniform as the rest, so the prefix picks
 * the row; the full id is still compared against the row itself. Ids stay
 * unique because a trigger in the schema skips an insert whose id is stored.
 *
 * Every lookup by id goes through this predicate, so that SQLite searches the
 * index (the expression must be written exactly as the index's). Two values
 * are bound — the prefix and the id — since a driver may not bind one
 * numbered parameter twice from an array.
 */

/** The bytes of an id the key index holds. */
export const OBJECT_KEY_PREFIX_BYTES = 8;

/** `WHERE` predicate for one object by id; bind `objectKey(id)`. */
export const OBJECT_BY_ID = `substr(id, 1, ${OBJECT_KEY_PREFIX_BYTES}) = ? AND id = ?`;

/** The values OBJECT_BY_ID binds: the id's prefix (a copy, not a view), then the id. */
export function objectKey(id: Uint8Array): [Uint8Array, Uint8Array] {
  return [id.slice(0, OBJECT_KEY_PREFIX_BYTES), id];
}

/**
 * True when an object whose id is `value` (an SQL expression) is stored: for
 * a statement another folder runs on its own tables that asks this in
 * passing (opening a run checks its current root in one statement).
 */
export function objectStored(value: string): string {
  return `EXISTS (SELECT 1 FROM workspace_object AS o WHERE ${objectIdEquals("o.id", value)})`;
}

/** The same predicate for a join: `column` (an object id) equal to `value`, an SQL expression. */
export function objectIdEquals(column: string, value: string): string {
  const n = OBJECT_KEY_PREFIX_BYTES;
  return `substr(${column}, 1, ${n}) = substr(${value}, 1, ${n}) AND ${column} = ${value}`;
}
