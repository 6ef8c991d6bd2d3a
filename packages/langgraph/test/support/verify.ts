/** Every run a test wrote passes runledger's deep verification. */
import { readdirSync } from "node:fs";
import { join } from "node:path";
import { RunStore } from "@runledger/core";
import type { Driver } from "@runledger/core/port";
import { expect } from "vitest";

/** The run at `location` opens read-only and verifies with no problem. */
export async function expectRunVerifies(store: RunStore, location: string): Promise<void> {
  const lease = await store.open(location, { readOnly: true });
  try {
    expect({ location, problems: (await lease.verify()).problems }).toStrictEqual({
      location,
      problems: [],
    });
  } finally {
    await lease.release();
  }
}

/** Every `.db` file in `directory` verifies; the number of files checked. */
export async function expectEveryFileVerifies(driver: Driver, directory: string): Promise<number> {
  const files = readdirSync(directory).filter((name) => name.endsWith(".db"));
  const store = new RunStore({ driver });
  try {
    for (const name of files) await expectRunVerifies(store, join(directory, name));
  } finally {
    await store.close();
  }
  return files.length;
}
