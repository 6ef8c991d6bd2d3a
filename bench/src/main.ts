/**
 * `npm run bench` runs every suite; `npm run bench -- port` runs the named ones.
 * BENCH_QUICK=1 makes each suite a short smoke check.
 */
import { runSuite, type Suite } from "./harness.js";
import { commitLogSuite } from "./suites/commit-log.js";
import { diffSuite } from "./suites/diff.js";
import { engineSuite } from "./suites/engine.js";
import { langgraphSuite } from "./suites/langgraph.js";
import { largeFileSuite } from "./suites/large-file.js";
import { leaseSuite } from "./suites/lease.js";
import { portSuite } from "./suites/port.js";
import { remoteSuite } from "./suites/remote.js";
import { runSuite as runDatabaseSuite } from "./suites/run.js";
import { stepsSuite } from "./suites/steps.js";

const SUITES: readonly Suite[] = [
  portSuite,
  leaseSuite,
  runDatabaseSuite,
  stepsSuite,
  engineSuite,
  langgraphSuite,
  largeFileSuite,
  commitLogSuite,
  remoteSuite,
  diffSuite,
];

const names = process.argv.slice(2);
const unknown = names.filter((name) => !SUITES.some((suite) => suite.name === name));
if (unknown.length > 0) {
  console.error(`unknown suite: ${unknown.join(", ")}`);
  console.error(`suites: ${SUITES.map((suite) => `${suite.name} (${suite.summary})`).join("; ")}`);
  process.exit(2);
}

const quick = process.env.BENCH_QUICK === "1";
for (const suite of SUITES) {
  if (names.length === 0 || names.includes(suite.name)) await runSuite(suite, quick);
}
