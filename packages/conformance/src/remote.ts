/**
 * @runledger/conformance/sqld — a real libSQL server for a remote subject:
 * start one (`startSqld`), address its namespaces (`resolveLocalhostSubdomains`).
 * Kept out of the main entry so the benchmarks can use it without vitest.
 */
export { resolveLocalhostSubdomains } from "./localhost-names.js";
export {
  createSqldNamespace,
  freePort,
  type SqldOptions,
  type SqldServer,
  sqldBinary,
  startSqld,
} from "./sqld.js";
