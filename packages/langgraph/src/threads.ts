/**
 * Listing across threads. A thread is a run, so "every thread" is every run
 * of the saver's workflow id, which the store's run catalog answers a page
 * at a time (one indexed statement a page): this is the one place the saver
 * asks for it. A store made without a catalog refuses with
 * `catalog_missing`, whose message says how to make one.
 */
import type { RunStore } from "@runledger/core";

/** How many runs one catalog page holds while the saver walks every thread. */
const PAGE = 100;

/** Every thread of `workflowId` in the store's catalog, newest first, a page at a time. */
export async function* catalogThreads(
  store: RunStore,
  workflowId: string,
): AsyncGenerator<{ readonly threadId: string; readonly location: string }> {
  let after: string | undefined;
  do {
    const page = await store.list({
      workflowId,
      limit: PAGE,
      ...(after === undefined ? {} : { after }),
    });
    for (const run of page.runs) yield { threadId: run.runId, location: run.location };
    after = page.next;
  } while (after !== undefined);
}
