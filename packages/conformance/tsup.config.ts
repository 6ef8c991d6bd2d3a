import { defineConfig } from "tsup";

export default defineConfig({
  // The child scripts are entries of their own: the suite spawns them as
  // separate Node processes from the built dist/ files.
  entry: {
    index: "src/index.ts",
    // A real libSQL server for remote subjects and the benchmarks (no vitest inside).
    sqld: "src/remote.ts",
    "child/holder": "src/child/holder.ts",
    "child/counter": "src/child/counter.ts",
    "child/run-peer": "src/child/run-peer.ts",
    "child/commit-log-peer": "src/child/commit-log-peer.ts",
    "child/routing-peer": "src/child/routing-peer.ts",
    "child/first-opener": "src/child/first-opener.ts",
    "child/open-probe": "src/child/open-probe.ts",
    "child/other-encoding-writer": "src/child/other-encoding-writer.ts",
    "child/catalog-writer": "src/child/catalog-writer.ts",
    "child/keyed-writer": "src/child/keyed-writer.ts",
  },
  format: ["esm"],
  dts: true,
  sourcemap: true,
  clean: true,
  target: "es2022",
  platform: "node",
});
