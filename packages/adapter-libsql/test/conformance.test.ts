import { libsqlDriver } from "@runledger/adapter-libsql";
import { describeConformance, temporaryFiles } from "@runledger/conformance";

describeConformance({
  name: "adapter-libsql",
  driver: () => libsqlDriver(),
  location: temporaryFiles("runledger-libsql-"),
  capabilities: {
    files: true,
    childProcesses: true,
    readersDuringWrite: true,
    walSharedMemory: true,
    sharedLocks: true,
    crashSafeLocks: true,
    extendedErrorCodes: true,
    callsNow: true,
  },
  // Module specifiers are resolved from this package (its own name, then node_modules).
  root: import.meta.url,
  child: { module: "@runledger/adapter-libsql", exportName: "libsqlDriver" },
  // The other adapter, run in a child process for the cross-adapter families.
  peers: [{ name: "adapter-node", module: "@runledger/adapter-node", exportName: "nodeDriver" }],
});
