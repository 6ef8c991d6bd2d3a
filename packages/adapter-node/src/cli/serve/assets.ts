/**
 * The page itself: plain HTML, CSS, JavaScript modules and an icon shipped in the
 * package (src/cli/serve/page/, copied to dist/page/ by the build), so
 * nothing is bundled or fetched when a user runs `runledger serve`, and the
 * page works with no network at all. They are read once, at start, into a
 * table: a URL names one of them or nothing, never a path on disk.
 */
import { readdir, readFile } from "node:fs/promises";
import { extname } from "node:path";

export interface Asset {
  readonly type: string;
  readonly body: Buffer;
}

const TYPES: Readonly<Record<string, string>> = {
  ".html": "text/html; charset=utf-8",
  ".css": "text/css; charset=utf-8",
  ".js": "text/javascript; charset=utf-8",
  ".svg": "image/svg+xml",
};

/**
 * Where the page's files are: beside the built CLI (dist/cli.js → dist/page/),
 * or beside this file when it runs from source.
 */
const PAGE_DIRECTORY = new URL("./page/", import.meta.url);

/** The page's files by URL path: "/" is index.html, every other one is "/assets/NAME". */
export async function loadAssets(): Promise<Map<string, Asset>> {
  const assets = new Map<string, Asset>();
  for (const name of await readdir(PAGE_DIRECTORY)) {
    const type = TYPES[extname(name)];
    if (type === undefined) continue;
    const body = await readFile(new URL(name, PAGE_DIRECTORY));
    assets.set(name === "index.html" ? "/" : `/assets/${name}`, { type, body });
  }
  return assets;
}
