import { describeConformance } from "@runledger/conformance";
import { vi } from "vitest";
import { remoteTarget } from "./support/remote-subject.js";

// The conformance suite against a real libSQL server over http:// (sqld,
// started for this file; or your own, see support/remote-subject.ts).
// Every statement is a round trip to the server: the local budget of 60 s per
// test is too tight for the larger workspace tests, over http above all.
vi.setConfig({ testTimeout: 240_000 });

const target = await remoteTarget("http");

describeConformance({
  name: `adapter-libsql remote: ${target.label}`,
  driver: target.driver,
  location: target.location,
  capabilities: { files: false, remote: true },
});
