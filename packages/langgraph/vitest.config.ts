import { defineConfig } from "vitest/config";

// globals: LangGraph's validation suite calls describe/it/expect as globals.
export default defineConfig({
  test: {
    include: ["test/**/*.test.ts"],
    globals: true,
    // deleteThread on adapter-libsql (file) waits for closed handles to be
    // collected; exposing gc lets it collect them at once (src/saver.ts).
    execArgv: ["--expose-gc"],
    testTimeout: 60_000,
    hookTimeout: 60_000,
  },
});
