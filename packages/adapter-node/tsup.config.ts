import { defineConfig } from "tsup";

// The library entry: what `import "@runledger/adapter-node"` loads. Its
// dependencies stay external (core is a peer, better-sqlite3 a dependency).
export default defineConfig({
  entry: { index: "src/index.ts" },
  format: ["esm"],
  dts: true,
  sourcemap: true,
  clean: true,
  target: "es2022",
  platform: "node",
});
