import { libsqlDriver } from "@runledger/adapter-libsql";
import { describeConformance, temporaryFiles } from "@runledger/conformance";

describeConformance({
  name: "adapter-libsql",
  driver: () => libsqlDriver(),
  location: temporaryFiles("runledger-libsql-"),
  capabilities: { files: true },
  child: { module: "@runledger/adapter-libsql", exportName: "libsqlDriver" },
  // The other adapter, run in a child process for the cross-adapter families.
  peers: [{ name: "adapter-node", module: "@runledger/adapter-node", exportName: "nodeDriver" }],
});
