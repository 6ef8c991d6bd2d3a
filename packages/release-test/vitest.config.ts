import { defineConfig } from "vitest/config";

export default defineConfig({
  test: {
    include: ["test/**/*.test.ts"],
    // One registry, installs that compile better-sqlite3: minutes, not seconds.
    testTimeout: 900_000,
    hookTimeout: 600_000,
    fileParallelism: false,
  },
});
