/**
 * @runledger/conformance — the suite every adapter runs (docs/writing-an-adapter.md). An
 * adapter's test file calls `describeConformance` once with a factory for its
 * driver; the suite registers vitest tests for every family the subject's
 * capabilities allow.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe } from "vitest";
import { describeBadFiles } from "./families/bad-files.js";
import { describeCatalog } from "./families/catalog.js";
import { describeCloseFiles } from "./families/close-files.js";
import { describeCommitLog } from "./families/commit-log.js";
import { describeConnection } from "./families/connection.js";
import { describeCrossAdapter } from "./families/cross-adapter.js";
import { describeCrossProcess } from "./families/cross-process.js";
import { describeDatastoreFiles } from "./families/datastore-files.js";
import { describeEndedTransactions } from "./families/ended-transactions.js";
import { describeErrors } from "./families/errors.js";
import { describeEscapedWork } from "./families/escaped-work.js";
import { describeFirstOpeners } from "./families/first-openers.js";
import { describeIdentity } from "./families/identity.js";
import { describeJournalChain } from "./families/journal-chain.js";
import { describeKeyedTransactions } from "./families/keyed-transactions.js";
import { describeKilledWriter } from "./families/killed-writer.js";
import { describeOpenCost } from "./families/open-cost.js";
import { describeOptimisticTransactions } from "./families/optimistic-transactions.js";
import { describeOtherEncodings } from "./families/other-encodings.js";
import { describePrefixListing } from "./families/prefix-listing.js";
import { describeReadModel } from "./families/read-model.js";
import { describeReadOnly } from "./families/read-only.js";
import { describeRouting } from "./families/routing.js";
import { describeRoutingGaps } from "./families/routing-gaps.js";
import { describeRoutingGuards } from "./families/routing-guards.js";
import { describeRoutingReconcile } from "./families/routing-reconcile.js";
import { describeRoutingVault } from "./families/routing-vault.js";
import { describeRunJournal } from "./families/run-journal.js";
import { describeRunLifecycle } from "./families/run-lifecycle.js";
import { describeRunRemove } from "./families/run-remove.js";
import { describeRunSchema } from "./families/run-schema.js";
import { describeSessions } from "./families/sessions.js";
import { describeSettings } from "./families/settings.js";
import { describeStagedCreation } from "./families/staged-creation.js";
import { describeStorageConstraints } from "./families/storage-constraints.js";
import { describeStrictArguments } from "./families/strict-arguments.js";
import { describeTransactions } from "./families/transactions.js";
import { describeTwoLibraries } from "./families/two-libraries.js";
import { describeValues } from "./families/values.js";
import { describeWorkspace } from "./families/workspace.js";
import { createFixtures } from "./fixtures.js";
import { skipSummary } from "./requirements.js";
import type { ConformanceSubject } from "./subject.js";

export type { Need } from "./requirements.js";
export type {
  Capability,
  ConformanceCapabilities,
  ConformanceChild,
  ConformancePeer,
  ConformanceSubject,
} from "./subject.js";

/**
 * Registers the conformance suite for one adapter. Call it at the top level of
 * a test file. Tests needing a capability the subject lacks are registered as
 * skipped ("[skipped: needs X]" in their titles); a summary of them by need is
 * printed when the suite ends.
 */
export function describeConformance(subject: ConformanceSubject): void {
  describe(`runledger conformance: ${subject.name}`, () => {
    // vitest reads the first parameter as a fixture list: it must be a pattern.
    // biome-ignore lint/correctness/noEmptyPattern: no fixture is needed, only the suite
    afterAll(({}, suite) => {
      const summary = skipSummary(suite);
      if (summary !== undefined) console.info(`${subject.name}: ${summary}`);
    });
    const fixtures = createFixtures(subject);
    describeValues(fixtures);
    describeErrors(fixtures);
    describeSessions(fixtures);
    describeSettings(fixtures);
    describeIdentity(fixtures);
    describeConnection(fixtures);
    describeTransactions(fixtures);
    describeEscapedWork(fixtures);
    describeCrossProcess(fixtures);
    describeTwoLibraries(fixtures);
    describeKilledWriter(fixtures);
    describeWorkspace(fixtures);
    describeRunSchema(fixtures);
    describeStagedCreation(fixtures);
    describeBadFiles(fixtures);
    describeOtherEncodings(fixtures);
    describeRunJournal(fixtures);
    describeKeyedTransactions(fixtures);
    describeOptimisticTransactions(fixtures);
    describeJournalChain(fixtures);
    describeCrossAdapter(fixtures);
    describeCommitLog(fixtures);
    describeReadModel(fixtures);
    describeRouting(fixtures);
    describeRoutingGuards(fixtures);
    describeRoutingGaps(fixtures);
    describeRoutingReconcile(fixtures);
    describeRoutingVault(fixtures);
    describeDatastoreFiles(fixtures);
    describeRunLifecycle(fixtures);
    describeRunRemove(fixtures);
    describeCatalog(fixtures);
    describePrefixListing(fixtures);
    describeReadOnly(fixtures);
    describeFirstOpeners(fixtures);
    describeOpenCost(fixtures);
    describeCloseFiles(fixtures);
    describeStrictArguments(fixtures);
    describeEndedTransactions(fixtures);
    describeStorageConstraints(fixtures);
  });
}

/**
 * A `location` factory for file-backed subjects: fresh file paths in one new
 * temporary directory, removed when the test file finishes. Call it at the
 * top level of a test file (it registers an afterAll hook).
 */
export function temporaryFiles(prefix = "runledger-conformance-"): () => string {
  const directory = mkdtempSync(join(tmpdir(), prefix));
  afterAll(() => rmSync(directory, { recursive: true, force: true }));
  let next = 0;
  return () => join(directory, `db-${++next}.sqlite`);
}
