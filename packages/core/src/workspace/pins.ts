/**
 * Pins: names that keep roots from garbage collection (`workspace_pin`). A
 * pinned root outlives the journal events that name it, so it is stored as
 * a row of its own when pinned.
 */
import { toHex } from "../port/bytes.js";
import type { Executor } from "../port/driver.js";

const PINS = "SELECT name, root_id FROM workspace_pin ORDER BY name";
const SET_PIN = `INSERT INTO workspace_pin (name, root_id, created_at) VALUES (?, ?, ?)
ON CONFLICT (name) DO UPDATE SET root_id = excluded.root_id`;
const REMOVE_PIN = "DELETE FROM workspace_pin WHERE name = ?";
/** Each pinned root once, by id. */
const PINNED_ROOTS = "SELECT DISTINCT root_id FROM workspace_pin ORDER BY root_id";

/** Every pin, by name: its name and the root it keeps (hex). */
export async function listPins(executor: Executor) {
  const { rows } = await executor.execute(PINS);
  return rows.map((row) => ({ name: String(row.name), rootId: toHex(row.root_id as Uint8Array) }));
}

/** Names `root` (stored already) by `name`, moving a pin of that name. */
export async function setPin(
  executor: Executor,
  name: string,
  root: Uint8Array,
  now: number,
): Promise<void> {
  await executor.execute(SET_PIN, [name, root, now]);
}

/** Drops the pin `name`: true when there was one. */
export async function removePin(executor: Executor, name: string): Promise<boolean> {
  return (await executor.execute(REMOVE_PIN, [name])).changes > 0;
}

/** The roots pins keep, each once, by id. */
export async function pinnedRoots(executor: Executor): Promise<Uint8Array[]> {
  return (await executor.execute(PINNED_ROOTS)).rows.map((row) => row.root_id as Uint8Array);
}
