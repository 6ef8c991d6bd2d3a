/**
 * The source files of core, for the tests that read them as text (layers,
 * headers): one walk, so that every such test sees the same files.
 */
import { readdirSync, statSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";

/** packages/core/src, with a trailing separator. */
export const SRC = fileURLToPath(new URL("../src/", import.meta.url));

/** Every .ts file below `directory` (default: src), as absolute paths. */
export function sourceFiles(directory: string = SRC): string[] {
  return readdirSync(directory).flatMap((name) => {
    const path = join(directory, name);
    if (statSync(path).isDirectory()) return sourceFiles(path);
    return name.endsWith(".ts") ? [path] : [];
  });
}
