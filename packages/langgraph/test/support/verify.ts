/** Every run file a test wrote passes runledger's deep verification. */
import { readdirSync } from "node:fs";
import { join } from "node:path";
import { RunStore } from "@runledger/core";
import type { Driver } from "@runledger/core/port";
import { expect } from "vitest";

export async function expectEveryFileVerifies(driver: Driver, directory: string): Promise<number> {
  const files = readdirSync(directory).filter((name) => name.endsWith(".db"));
  const store = new RunStore({ driver });
  try {
    for (const name of files) {
      const lease = await store.open(join(directory, name), { readOnly: true });
      try {
        expect({ name, problems: (await lease.verify()).problems }).toStrictEqual({
          name,
          problems: [],
        });
      } finally {
        await lease.release();
      }
    }
  } finally {
    await store.close();
  }
  return files.length;
}
