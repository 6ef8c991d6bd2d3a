import { defineConfig } from "tsup";

export default defineConfig({
  entry: { index: "src/index.ts" },
  format: ["esm"],
  dts: true,
  sourcemap: true,
  clean: true,
  target: "es2022",
  platform: "node",
  // The driver loads its .wasm file from beside its own module: never bundle it.
  external: ["node-sqlite3-wasm"],
});
