/**
 * The `runledger` CLI, built after the library entry into dist/cli.js. The
 * argument parser (commander) is bundled into this one file, so installing
 * @runledger/adapter-node as a library installs no CLI-only package; the
 * parser's license ships beside it as dist/cli.licenses.txt. The page
 * `runledger serve` shows is copied as it is written (src/cli/serve/page/ →
 * dist/page/): plain files, nothing to bundle.
 */
import { copyFileSync, cpSync } from "node:fs";
import { createRequire } from "node:module";
import { dirname, join } from "node:path";
import { defineConfig } from "tsup";

const require = createRequire(import.meta.url);

export default defineConfig({
  entry: { cli: "src/cli/main.ts" },
  format: ["esm"],
  dts: false,
  sourcemap: true,
  clean: false,
  target: "es2022",
  platform: "node",
  external: ["@runledger/core", "better-sqlite3"],
  noExternal: ["commander"],
  // commander is CommonJS: its require() of Node's own modules needs a real require.
  banner: {
    js: 'import { createRequire as __cliRequire } from "node:module"; const require = __cliRequire(import.meta.url);',
  },
  onSuccess: async () => {
    copyFileSync(join(dirname(require.resolve("commander")), "LICENSE"), "dist/cli.licenses.txt");
    cpSync("src/cli/serve/page", "dist/page", { recursive: true });
  },
});
