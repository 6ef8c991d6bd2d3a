import { defineConfig } from "tsup";

export default defineConfig({
  entry: { index: "src/index.ts", "port/index": "src/port/index.ts" },
  format: ["esm"],
  dts: true,
  sourcemap: true,
  clean: true,
  target: "es2022",
});
