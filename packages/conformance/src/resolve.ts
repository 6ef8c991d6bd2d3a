/**
 * Finds the module a child process imports to build a driver, from the
 * subject's own package rather than from inside @runledger/conformance: an
 * adapter in its own repository names itself or its dependencies with bare
 * specifiers, and they are found the way Node finds them from that package
 * (its own name through package.json, else node_modules up the tree, then
 * the package's "exports" or "main"). Absolute paths and file: URLs pass
 * through. The child gets a file: URL, so it needs no resolution of its own.
 */
import { existsSync, readFileSync, statSync } from "node:fs";
import { dirname, isAbsolute, join } from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";

interface PackageJson {
  readonly name?: string;
  readonly main?: string;
  readonly exports?: unknown;
}

/** `specifier` as a file: URL, resolved from `root` (a path or file: URL in the subject's package). */
export function resolveDriverModule(specifier: string, root: string | URL | undefined): string {
  if (specifier.startsWith("file:")) return specifier;
  if (isAbsolute(specifier)) return pathToFileURL(specifier).href;
  const start = startDirectory(root);
  const { name, subpath } = splitSpecifier(specifier);
  for (let dir = start; ; dir = dirname(dir)) {
    for (const candidate of [dir, join(dir, "node_modules", name)]) {
      const manifest = readManifest(candidate);
      if (manifest?.name === name) {
        const target = entryOf(manifest, subpath);
        if (target !== undefined) return pathToFileURL(join(candidate, target)).href;
      }
    }
    if (dirname(dir) === dir) break;
  }
  throw new Error(
    `cannot resolve the driver module "${specifier}" from ${start}: install it in the adapter's ` +
      "package, set subject.root to a path inside that package (its test file's import.meta.url), " +
      "or give an absolute path or file: URL",
  );
}

function startDirectory(root: string | URL | undefined): string {
  if (root === undefined) return process.cwd();
  const path = root instanceof URL || root.startsWith("file:") ? fileURLToPath(root) : String(root);
  return existsSync(path) && statSync(path).isDirectory() ? path : dirname(path);
}

function splitSpecifier(specifier: string): { name: string; subpath: string } {
  const parts = specifier.split("/");
  const length = specifier.startsWith("@") ? 2 : 1;
  const rest = parts.slice(length).join("/");
  return { name: parts.slice(0, length).join("/"), subpath: rest === "" ? "." : `./${rest}` };
}

function readManifest(directory: string): PackageJson | undefined {
  try {
    return JSON.parse(readFileSync(join(directory, "package.json"), "utf8")) as PackageJson;
  } catch {
    return undefined;
  }
}

/** The file a package's export `subpath` names under the "import", "node" or "default" condition. */
function entryOf(manifest: PackageJson, subpath: string): string | undefined {
  const exports = manifest.exports;
  if (exports === undefined) return subpath === "." ? (manifest.main ?? "index.js") : subpath;
  const map =
    typeof exports === "string" || !Object.keys(exports as object).some((k) => k.startsWith("."))
      ? { ".": exports }
      : (exports as Record<string, unknown>);
  return pick(map[subpath]);
}

function pick(target: unknown): string | undefined {
  if (typeof target === "string") return target;
  if (target === null || typeof target !== "object") return undefined;
  const conditions = target as Record<string, unknown>;
  for (const condition of ["import", "node", "default"]) {
    const found = pick(conditions[condition]);
    if (found !== undefined) return found;
  }
  return undefined;
}
