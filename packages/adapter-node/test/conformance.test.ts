import { nodeDriver } from "@runledger/adapter-node";
import { describeConformance, temporaryFiles } from "@runledger/conformance";

describeConformance({
  name: "adapter-node",
  driver: () => nodeDriver(),
  location: temporaryFiles("runledger-node-"),
  capabilities: {
    files: true,
    childProcesses: true,
    readersDuringWrite: true,
    walSharedMemory: true,
    sharedLocks: true,
    crashSafeLocks: true,
    extendedErrorCodes: true,
    closeRemovesSideFiles: true,
    closeReleasesFile: true,
    stagedCreation: true,
    stagedCopies: true,
    callsNow: true,
  },
  // Module specifiers are resolved from this package (its own name, then node_modules).
  root: import.meta.url,
  child: { module: "@runledger/adapter-node", exportName: "nodeDriver" },
  // The other adapter, run in a child process for the cross-adapter families.
  peers: [
    { name: "adapter-libsql", module: "@runledger/adapter-libsql", exportName: "libsqlDriver" },
  ],
});
