/**
 * @runledger/conformance/sqld — a real libSQL server for a remote subject:
 * start one (`startSqld`), address its namespaces (`resolveLocalhostSubdomains`),
 * count what an HTTP client sends it (`recordHttpRequests`).
 * Kept out of the main entry so the benchmarks can use it without vitest.
 */
export { resolveLocalhostSubdomains } from "./localhost-names.js";
export {
  createSqldNamespace,
  freePort,
  recordHttpRequests,
  type SqldOptions,
  type SqldServer,
  sqldBinary,
  startSqld,
} from "./sqld.js";
