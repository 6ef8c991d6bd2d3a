/**
 * The third backend: node-sqlite3-wasm through the conformance suite, with
 * what it cannot do declared, so every test it does not pass is reported as
 * skipped with its reason (see docs/writing-an-adapter.md).
 */
import { wasmDriver } from "@runledger/adapter-wasm";
import { describeConformance, temporaryFiles } from "@runledger/conformance";

describeConformance({
  name: "adapter-wasm",
  driver: () => wasmDriver(),
  location: temporaryFiles("runledger-wasm-"),
  capabilities: {
    files: true,
    childProcesses: true,
    // Its VFS locks with one lock directory per file, taken for any lock
    // level: a reader waits for a writer, and the other way round.
    readersDuringWrite: false,
    // No shared-memory index: WAL only in EXCLUSIVE locking mode, one
    // connection owning the file until it closes.
    walSharedMemory: false,
    // Its close closes the file: a removal may follow at once.
    closeReleasesFile: true,
    // Its lock directory is invisible to the OS locks other SQLite libraries take...
    sharedLocks: false,
    // ...and outlives a killed process, holding every later opener busy.
    crashSafeLocks: false,
    // SQLite3Error carries the message only; src/errors.ts derives codes from it.
    extendedErrorCodes: false,
  },
  root: import.meta.url,
  child: { module: "@runledger/adapter-wasm", exportName: "wasmDriver" },
  peers: [{ name: "adapter-node", module: "@runledger/adapter-node", exportName: "nodeDriver" }],
});
