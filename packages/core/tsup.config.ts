import { defineConfig } from "tsup";

export default defineConfig({
  entry: {
    index: "src/index.ts",
    "commit-log": "src/commit-log.ts",
    datastore: "src/datastore.ts",
    engine: "src/engine.ts",
    "port/index": "src/port/index.ts",
  },
  format: ["esm"],
  // Members marked @internal (constructors of handles a store hands out,
  // core's own bookkeeping) are left out of the published declarations.
  dts: { compilerOptions: { stripInternal: true } },
  sourcemap: true,
  clean: true,
  target: "es2022",
});
