/**
 * @runledger/core — the public face. Runtime-agnostic: no `node:` module and
 * no SQL driver is imported anywhere below this file.
 */
export * from "./port/index.js";
