import { describeConformance } from "@runledger/conformance";
import { remoteTarget } from "./support/remote-subject.js";

// The conformance suite against a real libSQL server over http:// (sqld,
// started for this file; or your own, see support/remote-subject.ts).
const target = await remoteTarget("http");

describeConformance({
  name: `adapter-libsql remote: ${target.label}`,
  driver: target.driver,
  location: target.location,
  capabilities: { files: false, remote: true },
});
