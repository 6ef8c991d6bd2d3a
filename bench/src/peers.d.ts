/**
 * The bench-only contenders installed apart from the workspace (see
 * bench/scripts/peers.mjs). `npm test` type-checks the bench on a clone where
 * they are not installed, so their modules are declared here without types.
 */
declare module "@mastra/libsql";
