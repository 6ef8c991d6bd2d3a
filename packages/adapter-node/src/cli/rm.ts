/**
 * `runledger rm`: deleting a run file with its side files, the way the
 * library does it (`store.remove`): only a run, only when nothing else has
 * it open, never half.
 */
import { RunStore } from "@runledger/core";
import { nodeDriver } from "../driver.js";
import { EXIT_OK, type Output, report } from "./output.js";

export async function rm(file: string, output: Output): Promise<number> {
  const store = new RunStore({ driver: nodeDriver() });
  try {
    await store.remove(file);
  } finally {
    await store.close();
  }
  await report(output, { file, removed: true }, () => [`removed    ${file}`]);
  return EXIT_OK;
}
